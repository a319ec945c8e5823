import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * A hook's secret token is sent with every delivery, so it is kept sealed (AES-256-GCM under a key
 * derived from SECRET_KEY_BASE) rather than digested: a database dump alone does not reveal it.
 */
export class TokenSeal {
  private readonly key: Buffer;

  constructor(secretKeyBase: string) {
    this.key = createHash('sha256').update(`basalt:webhook-token:${secretKeyBase}`).digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
  }

  /** The token, or null when it cannot be opened (SECRET_KEY_BASE changed): the delivery goes without it. */
  open(sealed: string | null): string | null {
    if (!sealed) return null;
    const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
    if (!iv || !tag || !body) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
