import { ALL_SCOPES } from '../../infra/auth/index.js';
import { ADMIN_ONLY_SCOPES, OAUTH_DEFAULTS } from './oauth.defaults.js';

const KNOWN = new Set<string>(ALL_SCOPES);

/** RFC 6749 §3.3: space-delimited scope tokens; `null` when the value is malformed. */
export function parseScope(value: string | undefined): string[] | null {
  if (value === undefined) return [];
  if (/[\t\r\n]/.test(value)) return null;
  const scopes = value.split(' ').filter(Boolean);
  if (scopes.some((s) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s))) return null;
  return [...new Set(scopes)];
}

export const splitScopes = (stored: string): string[] => stored.split(' ').filter(Boolean);
export const joinScopes = (scopes: readonly string[]): string => scopes.join(' ');

/**
 * The scopes a request ends up with: the requested ones (default `api`, reference §2.2),
 * each of which the application must have registered. `null` means `invalid_scope`.
 */
export function grantableScopes(requested: string | undefined, registered: readonly string[]): string[] | null {
  const parsed = parseScope(requested);
  if (parsed === null) return null;
  const wanted = parsed.length > 0 ? parsed : OAUTH_DEFAULTS.defaultScopes.filter((s) => registered.includes(s));
  if (wanted.length === 0 || wanted.some((s) => !registered.includes(s) || !KNOWN.has(s))) return null;
  return wanted;
}

/** The scopes a user may register on an application (admin scopes need an administrator). */
export function registrableScopes(isAdmin: boolean): string[] {
  return ALL_SCOPES.filter((s) => isAdmin || !(ADMIN_ONLY_SCOPES as readonly string[]).includes(s));
}
