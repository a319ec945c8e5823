import { TOKEN_PREFIX, constantTimeEqual, digestToken, generateToken } from '../../infra/crypto.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';

/**
 * OAuth tokens are `bso_<id>_<secret>` (access) and `bsr_<id>_<secret>` (refresh): the id of
 * the row that holds both, in decimal, then a 256-bit random secret (base64url, which may
 * itself contain `_`; the id ends at the first one). The row keeps only the SHA-256 digest of
 * each secret, so a token is found by primary key and then proven by its secret; no index
 * over random digests is written for each token issued (docs/decisions.md "OAuth token format").
 */
export type OAuthTokenKind = 'access' | 'refresh';

export interface PresentedToken {
  kind: OAuthTokenKind;
  id: number;
  /** Digest of the secret part, compared with the row's in constant time. */
  digest: string;
}

const PREFIXES: Readonly<Record<OAuthTokenKind, string>> = { access: TOKEN_PREFIX.oauthAccess, refresh: TOKEN_PREFIX.oauthRefresh };
/** Ids are safe integers: at most 16 decimal digits, no leading zero. */
const ID_PATTERN = /^[1-9][0-9]{0,15}$/;

/** A new secret part; its digest goes into the row before the id is known. */
export function newTokenSecret(): { secret: string; digest: string } {
  const secret = generateToken('', OAUTH_DEFAULTS.secretBytes);
  return { secret, digest: digestToken(secret) };
}

export function formatToken(kind: OAuthTokenKind, id: number, secret: string): string {
  return `${PREFIXES[kind]}${id}_${secret}`;
}

/** The token's kind, row id and secret digest, or null when it is not of our format. */
export function parseToken(text: string): PresentedToken | null {
  const kind: OAuthTokenKind | null = text.startsWith(PREFIXES.access) ? 'access' : text.startsWith(PREFIXES.refresh) ? 'refresh' : null;
  if (kind === null || text.length > OAUTH_DEFAULTS.maxParameterLength) return null;
  const separator = text.indexOf('_', PREFIXES[kind].length);
  if (separator < 0) return null;
  const idText = text.slice(PREFIXES[kind].length, separator);
  if (!ID_PATTERN.test(idText)) return null;
  const id = Number(idText);
  if (!Number.isSafeInteger(id)) return null;
  return { kind, id, digest: digestToken(text.slice(separator + 1)) };
}

/** True when `stored` (a row's digest, null for a row without that secret) proves the token. */
export function provesToken(presented: PresentedToken, stored: string | null): boolean {
  return stored !== null && constantTimeEqual(presented.digest, stored);
}
