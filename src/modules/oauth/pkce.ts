import { hash } from 'node:crypto';
import { constantTimeEqual } from '../../infra/crypto.js';
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
  if (!OAUTH_DEFAULTS.pkceVerifierPattern.test(challenge)) return 'code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.';
  return null;
}

const s256 = (verifier: string): string => hash('sha256', Buffer.from(verifier, 'ascii'), 'base64url');

/**
 * RFC 7636 §4.6 at the token endpoint. A verifier for a code issued without a challenge is
 * refused (RFC 9700 §4.8.2 downgrade); comparison is constant-time.
 */
export function verifyPkce(stored: PkceRequest, verifier: string | undefined): void {
  if (stored.challenge === null) {
    if (verifier !== undefined) throw new InvalidGrantError('code_verifier was sent for a code issued without code_challenge.');
    return;
  }
  if (verifier === undefined) throw new InvalidRequestError('Missing required parameter: code_verifier.');
  if (!OAUTH_DEFAULTS.pkceVerifierPattern.test(verifier)) throw new InvalidGrantError('code_verifier is malformed.');
  if (!constantTimeEqual(s256(verifier), stored.challenge)) throw new InvalidGrantError('code_verifier does not match code_challenge.');
}
