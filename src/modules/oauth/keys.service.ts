import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import type { Clock } from '../../infra/clock.js';
import type { OAuthStorage } from './oauth.storage.js';

const PURPOSE = 'id_token';
const ALGORITHM = 'RS256';

interface LoadedKey {
  kid: string;
  publicJwk: JWK;
  privateKey: CryptoKey | Uint8Array;
}

/** AES-256-GCM with a key derived from SECRET_KEY_BASE: a database dump alone cannot sign tokens. */
function sealingKey(secretKeyBase: string): Buffer {
  return createHash('sha256').update(`basalt:oauth-signing-key:${secretKeyBase}`).digest();
}

function seal(plain: string, secretKeyBase: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(secretKeyBase), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((part) => part.toString('base64url')).join('.');
}

function unseal(sealed: string, secretKeyBase: string): string {
  const [iv, tag, body] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !tag || !body) throw new Error('the stored OIDC signing key is malformed');
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(secretKeyBase), iv);
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('the stored OIDC signing key cannot be opened: SECRET_KEY_BASE differs from the one it was sealed with');
  }
}

export interface IdTokenClaims {
  sub: string;
  aud: string;
  nonce?: string | null;
  authTime?: number | null;
  extra: Record<string, unknown>;
}

/**
 * The RS256 key that signs id_tokens (OIDC Core §2). Generated once and stored in the
 * database, so every process behind a load balancer signs with, and publishes, the same key;
 * concurrent first starts race on a unique row and all adopt the winner's key.
 */
export class SigningKeys {
  private loaded: Promise<LoadedKey> | null = null;

  constructor(
    private readonly storage: OAuthStorage,
    private readonly clock: Clock,
    private readonly secretKeyBase: string,
    private readonly issuer: string,
  ) {}

  private key(): Promise<LoadedKey> {
    this.loaded ??= this.load().catch((error: unknown) => {
      this.loaded = null;
      throw error;
    });
    return this.loaded;
  }

  private async load(): Promise<LoadedKey> {
    let row = await this.storage.findSigningKey(PURPOSE);
    if (!row) {
      const { publicKey, privateKey } = await generateKeyPair(ALGORITHM, { modulusLength: 2048, extractable: true });
      const publicJwk = await exportJWK(publicKey);
      const kid = await calculateJwkThumbprint(publicJwk);
      row = await this.storage.insertSigningKey({
        purpose: PURPOSE,
        kid,
        algorithm: ALGORITHM,
        public_jwk: JSON.stringify(publicJwk),
        private_jwk_sealed: seal(JSON.stringify(await exportJWK(privateKey)), this.secretKeyBase),
        created_at: this.clock.now(),
      });
    }
    const privateJwk = JSON.parse(unseal(row.private_jwk_sealed, this.secretKeyBase)) as JWK;
    return { kid: row.kid, publicJwk: JSON.parse(row.public_jwk) as JWK, privateKey: await importJWK(privateJwk, row.algorithm) };
  }

  /** `/oauth/discovery/keys`: the public half only. */
  async jwks(): Promise<{ keys: JWK[] }> {
    const key = await this.key();
    return { keys: [{ ...key.publicJwk, kid: key.kid, use: 'sig', alg: ALGORITHM }] };
  }

  async signIdToken(claims: IdTokenClaims, ttlSeconds: number): Promise<string> {
    const key = await this.key();
    const now = Math.floor(this.clock.now() / 1000);
    const payload: Record<string, unknown> = { ...claims.extra };
    if (claims.nonce) payload.nonce = claims.nonce;
    if (claims.authTime) payload.auth_time = Math.floor(claims.authTime / 1000);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT', kid: key.kid })
      .setIssuer(this.issuer)
      .setSubject(claims.sub)
      .setAudience(claims.aud)
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(key.privateKey);
  }
}
