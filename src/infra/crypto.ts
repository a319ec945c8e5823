import { hash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto';

/** Type prefixes make a leaked secret recognisable (DESIGN.md §4). */
export const TOKEN_PREFIX = {
  personal: 'bsp_',
  oauthAccess: 'bso_',
  oauthRefresh: 'bsr_',
  job: 'bsj_',
  alertKey: 'bsa_',
  clientSecret: 'bss_',
} as const;

// Secrets draw their bytes from a pool the CSPRNG refills 4 KB at a time: one system call per
// about a hundred tokens instead of one per token (a refresh grant makes two). Each byte is
// handed out once and only as text; the pool never leaves this module.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** A secret: `bytes` random bytes (256 bits by default) after the prefix, URL-safe. */
export function generateToken(prefix: string, bytes = 32): string {
  if (bytes > POOL_BYTES) return prefix + randomBytes(bytes).toString('base64url');
  if (poolOffset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  const text = pool.toString('base64url', poolOffset, poolOffset + bytes);
  // Spent bytes are wiped, so a heap dump shows only what is yet to be handed out.
  pool.fill(0, poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return prefix + text;
}

export function sha256Hex(value: string | Buffer): string {
  // One-shot hashing: no Hash object per call (this runs on every token-authenticated request).
  return hash('sha256', value, 'hex');
}

/** Tokens and secrets are stored only as this digest. */
export const digestToken = sha256Hex;

/**
 * Compares two secrets without leaking where they differ. Equal byte lengths (the case of every
 * caller: digests, HMACs and tokens of a fixed format, whose length is public) are compared as
 * they are; otherwise both are hashed first so the comparison still takes constant time.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length === right.length) return timingSafeEqual(left, right);
  timingSafeEqual(hash('sha256', left, 'buffer'), hash('sha256', right, 'buffer'));
  return false;
}

function scrypt(password: BinaryLike, salt: BinaryLike, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 64 } as const;

/** `scrypt$N$r$p$salt$hash`, so parameters can be raised later without breaking old hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    // Spend the same effort on an unknown account as on a known one.
    await scrypt(password, 'timing-equaliser', SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
    return false;
  }
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 256 * Number(n) * Number(r),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export function randomPassword(): string {
  return randomBytes(18).toString('base64url');
}
