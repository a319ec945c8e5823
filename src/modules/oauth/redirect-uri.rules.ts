import { FORBIDDEN_REDIRECT_SCHEMES, OAUTH_DEFAULTS } from './oauth.defaults.js';

export const splitRedirectUris = (stored: string): string[] => stored.split('\n').filter(Boolean);

/** Validates the registered URIs (one per line); returns them or the problems found. */
export function parseRedirectUris(text: string): { uris: string[]; problems: string[] } {
  const uris = [
    ...new Set(
      text
        .split(/[\r\n]+/)
        .map((line) => line.trim())
        .filter(Boolean),
    ),
  ];
  const problems: string[] = [];
  if (uris.length === 0) problems.push("can't be blank");
  if (uris.length > OAUTH_DEFAULTS.maxRedirectUris) problems.push(`can have at most ${OAUTH_DEFAULTS.maxRedirectUris} URIs`);
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem && !problems.includes(problem)) problems.push(problem);
  }
  return { uris, problems };
}

/** RFC 6749 §3.1.2: absolute, no fragment; Doorkeeper's messages (reference §2.10). */
function redirectUriProblem(uri: string): string | null {
  if (uri.length > OAUTH_DEFAULTS.maxRedirectUriLength) return 'is too long';
  if (/\s/.test(uri)) return 'must be a valid URI.';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return /^[a-z][a-z0-9+.-]*:/i.test(uri) ? 'must be a valid URI.' : 'must be an absolute URI.';
  }
  if (uri.includes('#')) return 'cannot contain a fragment.';
  if ((FORBIDDEN_REDIRECT_SCHEMES as readonly string[]).includes(url.protocol)) return 'is forbidden by the server.';
  if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.hostname) return 'must be a valid URI.';
  if (url.username || url.password) return 'must be a valid URI.';
  return null;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/** `http://127.0.0.1:PORT/path?q` without its port, or null when it is not a loopback IP URI. */
function withoutLoopbackPort(uri: string): string | null {
  const match = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?(\/[^#]*)?$/i.exec(uri);
  if (!match?.[1] || !LOOPBACK_HOSTS.has(match[1].toLowerCase())) return null;
  // Five digits reach 99999: a port past 65535 is no URI at all (it could not be redirected to).
  if (match[2] !== undefined && Number(match[2]) > 65_535) return null;
  return `http://${match[1].toLowerCase()}${match[3] ?? ''}`;
}

/**
 * RFC 9700 §4.1.3 / RFC 6749 §3.1.2.3: simple string comparison with a registered URI. The
 * one exception is the port of an `http` loopback IP literal, which native apps pick at run
 * time (RFC 8252 §7.3). No prefix, pattern, case or normalisation leniency.
 */
export function redirectUriAllowed(registered: readonly string[], requested: string): boolean {
  if (requested.length > OAUTH_DEFAULTS.maxRedirectUriLength || requested.includes('#')) return false;
  if (registered.includes(requested)) return true;
  const loose = withoutLoopbackPort(requested);
  return loose !== null && registered.some((uri) => withoutLoopbackPort(uri) === loose);
}
