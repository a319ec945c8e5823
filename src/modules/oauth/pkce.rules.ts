import { hash, timingSafeEqual } from 'node:crypto';
import { InvalidGrantError, InvalidRequestError } from '../../infra/errors/index.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';

export interface PkceRequest {
  challenge: string | null;
  method: string | null;
}

/**
 * Checks the challenge at /oauth/authorize. RFC 7636 §4.2–4.4 and RFC 9700 §2.1.1: S256
 * only, `plain` and unknown methods are `invalid_request`, and so is a challenge outside the
 * ABNF. Returns a description of the problem, or null.
 */
export function checkChallenge(challenge: string | undefined, method: string | undefined, required: boolean): string | null {
  if (challenge === undefined) {
    if (method !== undefined) return 'code_challenge_method was sent without code_challenge.';
    return required ? 'PKCE is required: code_challenge and code_challenge_method=S256 are missing.' : null;
  }
  if (method === undefined) return 'Missing required parameter: code_challenge_method.';
  if (!(OAUTH_DEFAULTS.pkceMethods as readonly string[]).includes(method)) return 'code_challenge_method must be S256.';
  if (!OAUTH_DEFAULTS.pkceChallengePattern.test(challenge)) return 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.';
  return null;
}

/** RFC 7636 §4.6: BASE64URL(SHA256(ASCII(verifier))), unpadded, as ASCII bytes. */
const s256 = (verifier: string): Buffer => Buffer.from(hash('sha256', Buffer.from(verifier, 'ascii'), 'base64url'), 'ascii');

/**
 * S256 check in constant time. The challenge's length is public (the client chose it), so only
 * equal-length buffers reach timingSafeEqual, which compares every byte whatever differs.
 */
function s256Matches(verifier: string, challenge: string): boolean {
  const expected = Buffer.from(challenge, 'ascii');
  const actual = s256(verifier);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * RFC 7636 §4.6 at the token endpoint. A verifier for a code issued without a challenge is
 * refused (RFC 9700 §4.8.2 downgrade). The verifier's length is checked, and its alphabet only
 * as far as printable ASCII (oauth.defaults.ts says why); the comparison is constant-time.
 */
export function verifyPkce(stored: PkceRequest, verifier: string | undefined): void {
  if (stored.challenge === null) {
    if (verifier !== undefined) throw new InvalidGrantError('code_verifier was sent for a code issued without code_challenge.');
    return;
  }
  if (verifier === undefined) throw new InvalidRequestError('Missing required parameter: code_verifier.');
  if (!OAUTH_DEFAULTS.pkceVerifierPattern.test(verifier)) throw new InvalidGrantError('code_verifier is malformed.');
  if (!s256Matches(verifier, stored.challenge)) throw new InvalidGrantError('code_verifier does not match code_challenge.');
}
