import type { FastifyRequest } from 'fastify';
import { header } from '../../infra/auth/index.js';
import { constantTimeEqual, digestToken } from '../../infra/crypto.js';
import { InvalidClientError, InvalidRequestError } from '../../infra/errors/index.js';
import type { ApplicationRow, ClientApplication, OAuthStorage } from './oauth.storage.js';
import type { OAuthParams } from './params.rules.js';

export interface ClientCredentials {
  readonly clientId: string | undefined;
  readonly clientSecret: string | undefined;
  readonly method: 'client_secret_basic' | 'client_secret_post' | 'none';
}

function decodeBasicPart(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, '%20'));
  } catch {
    throw new InvalidClientError('The client credentials in the Authorization header are malformed.');
  }
}

/**
 * RFC 6749 §2.3.1: HTTP Basic (form-urlencoded id and secret) or `client_id`/`client_secret`
 * in the body, never both at once (§2.3: "MUST NOT use more than one authentication method").
 */
export function readClientCredentials(request: FastifyRequest, params: OAuthParams): ClientCredentials {
  const authorization = header(request, 'authorization');
  const basic = authorization ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization) : null;
  if (basic?.[1]) {
    if (params.has('client_secret')) throw new InvalidRequestError('Use only one client authentication method.');
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new InvalidClientError('The client credentials in the Authorization header are malformed.');
    const clientId = decodeBasicPart(decoded.slice(0, colon));
    const bodyId = params.get('client_id');
    if (bodyId !== undefined && bodyId !== clientId) throw new InvalidRequestError('client_id does not match the Authorization header.');
    const clientSecret = decodeBasicPart(decoded.slice(colon + 1));
    // A public client that sends Basic with an empty secret (Go's oauth2 library tries this
    // first; git-credential-oauth uses it) authenticates by its id alone, as Doorkeeper allows.
    // A confidential application is still refused: it has no secret to match.
    if (clientSecret.length === 0) return { clientId, clientSecret: undefined, method: 'none' };
    return { clientId, clientSecret, method: 'client_secret_basic' };
  }
  const clientSecret = params.get('client_secret');
  return { clientId: params.get('client_id'), clientSecret, method: clientSecret === undefined ? 'none' : 'client_secret_post' };
}

/**
 * The application these credentials authenticate, or `invalid_client`. Confidential
 * applications must present their secret; public ones authenticate with `client_id` alone
 * (PKCE then binds the code) but a secret they do send must be right. Secrets are compared
 * as digests in constant time.
 */
export function checkClient<App extends ClientApplication>(app: App | undefined, credentials: ClientCredentials): App {
  if (!app || credentials.clientId === undefined) throw new InvalidClientError();
  if (credentials.clientSecret === undefined) {
    if (app.confidential === 1) throw new InvalidClientError();
    return app;
  }
  if (!constantTimeEqual(digestToken(credentials.clientSecret), app.secret_digest)) throw new InvalidClientError();
  return app;
}

export async function authenticateClient(storage: OAuthStorage, credentials: ClientCredentials): Promise<ApplicationRow> {
  if (credentials.clientId === undefined) throw new InvalidClientError();
  return checkClient(await storage.findApplicationByUid(credentials.clientId), credentials);
}
