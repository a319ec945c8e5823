import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Secrets {
  secretKeyBase: string;
}

/** Secrets generated on first start live in DATA_DIR/secrets.json (mode 0600). */
export function loadOrCreateSecrets(dataDir: string): Secrets {
  const file = path.join(dataDir, 'secrets.json');
  if (existsSync(file)) {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Secrets>;
    if (typeof parsed.secretKeyBase === 'string' && parsed.secretKeyBase.length >= 32) {
      return { secretKeyBase: parsed.secretKeyBase };
    }
  }
  const secrets: Secrets = { secretKeyBase: randomBytes(48).toString('hex') };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}
