// Writes docs/openapi.json from the route schemas; with --check, fails when the committed
// file differs from what the code would generate (CI runs the check).
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { migrateToLatest, openDatabase } from '../src/infra/db/index.js';

const target = path.join(import.meta.dirname, '..', 'docs', 'openapi.json');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-openapi-'));
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', EXTERNAL_URL: 'http://localhost:8080' });
const database = openDatabase({ databaseUrl: null, sqliteFile: ':memory:', schema: null });
await migrateToLatest(database.db, database.dialect);
const app = await buildApp(config, { database, startJobs: false });
await app.ready();
const response = await app.inject({ method: 'GET', url: '/api/v4/openapi.json' });
const generated = `${JSON.stringify(JSON.parse(response.body), null, 2)}\n`;
await app.close();
await database.close();
rmSync(dataDir, { recursive: true, force: true });

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== generated) {
    process.stderr.write('docs/openapi.json is stale: run `npm run openapi` and commit the result\n');
    process.exit(1);
  }
  process.stdout.write('docs/openapi.json is current\n');
} else {
  writeFileSync(target, generated);
  process.stdout.write(`wrote ${target}\n`);
}
