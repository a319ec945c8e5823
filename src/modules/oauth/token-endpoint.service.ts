import type { FastifyRequest } from 'fastify';
import type { Clock } from '../../infra/clock.js';
import { UnsupportedGrantTypeError } from '../../infra/errors/index.js';
import { readClientCredentials } from './client-auth.service.js';
import { authorizationCodeGrant } from './grants/authorization-code.js';
import { deviceCodeGrant } from './grants/device-code.js';
import type { GrantContext, IdTokenRequest, TokenResponse } from './grants/grant-context.js';
import { refreshTokenGrant } from './grants/refresh-token.js';
import { DEVICE_CODE_GRANT } from './oauth.defaults.js';
import type { OAuthStorage } from './oauth.storage.js';
import { readParams, requireParam } from './params.rules.js';
import type { OAuthTokens } from './tokens.service.js';

/** The grants we offer; implicit, password and client_credentials are not (RFC 9700 §2.1.2, §2.4). */
const GRANTS: Readonly<Record<string, (ctx: GrantContext) => Promise<TokenResponse>>> = {
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
  [DEVICE_CODE_GRANT]: deviceCodeGrant,
};

export interface TokenEndpointDeps {
  storage: OAuthStorage;
  clock: Clock;
  tokens: OAuthTokens;
  readonly idToken: (request: IdTokenRequest) => Promise<string | null>;
}

/**
 * `POST /oauth/token` as a short list of steps: parse (duplicates refused), read the client's
 * credentials, pick the grant, run it (each grant authenticates the client first).
 */
export async function tokenEndpoint(deps: TokenEndpointDeps, request: FastifyRequest): Promise<TokenResponse> {
  const params = readParams(request.body ?? {});
  const credentials = readClientCredentials(request, params);
  const grantType = requireParam(params, 'grant_type');
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant) throw new UnsupportedGrantTypeError();
  // Named fields, not a spread of `deps`: the route passes its whole dependency bag (a dozen
  // fields) and copying it was a measurable share of a refresh grant (docs/perf-lab.md).
  return grant({
    storage: deps.storage,
    clock: deps.clock,
    tokens: deps.tokens,
    idToken: deps.idToken,
    credentials,
    params,
    ip: request.ip,
  });
}
