import { digestToken } from '../../../infra/crypto.js';
import {
  AccessDeniedError,
  AuthorizationPendingError,
  ExpiredTokenError,
  InvalidGrantError,
  SlowDownError,
} from '../../../infra/errors/index.js';
import { authenticateClient } from '../client-auth.service.js';
import { OAUTH_DEFAULTS } from '../oauth.defaults.js';
import { mapTokenResponse } from '../oauth.presenter.js';
import { requireParam } from '../params.rules.js';
import { splitScopes } from '../scopes.rules.js';
import { LostRace, type GrantContext, type TokenResponse } from './grant-context.js';

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5, checklist
 * B6). The poll interval and the last poll time live in the row, so `slow_down` is right
 * across processes: a poll sooner than the interval adds 5 s to it for every later poll.
 */
export async function deviceCodeGrant(ctx: GrantContext): Promise<TokenResponse> {
  const application = await authenticateClient(ctx.storage, ctx.credentials);
  const deviceCode = requireParam(ctx.params, 'device_code');
  const grant = await ctx.storage.findDeviceGrantByDeviceDigest(digestToken(deviceCode));
  if (!grant || grant.application_id !== application.id) throw new InvalidGrantError();
  const now = ctx.clock.now();
  const reuse = { family: grant.family, userId: grant.user_id, application, tokenId: null, reason: 'device_code_reused', ip: ctx.ip };
  if (grant.status === 'consumed') {
    await ctx.storage.transaction((storage, executor) => ctx.tokens.revokeReusedFamily(storage, executor, reuse, now));
    throw new InvalidGrantError('The device code has already been used; tokens issued from it are revoked.');
  }
  if (grant.expires_at <= now) throw new ExpiredTokenError();
  if (!(await ctx.storage.recordPoll(grant.id, now))) {
    await ctx.storage.slowDown(grant.id, now, OAUTH_DEFAULTS.slowDownIncrementSeconds);
    throw new SlowDownError();
  }
  if (grant.status === 'denied') throw new AccessDeniedError();
  if (grant.status === 'pending' || grant.user_id === null) throw new AuthorizationPendingError();

  const scopes = splitScopes(grant.scopes);
  const userId = grant.user_id;
  let issued;
  try {
    issued = await ctx.storage.transaction(async (storage) => {
      if (!(await storage.consumeDeviceGrant(grant.id))) throw new LostRace(grant.family);
      // SPEC "Token response": refresh tokens come with the authorization code flows only.
      return ctx.tokens.issue(storage, { application, userId, scopes, family: grant.family, withRefresh: false });
    });
  } catch (error) {
    if (!(error instanceof LostRace)) throw error;
    await ctx.storage.transaction((storage, executor) => ctx.tokens.revokeReusedFamily(storage, executor, reuse, ctx.clock.now()));
    throw new InvalidGrantError('The device code has already been used; tokens issued from it are revoked.');
  }
  const idToken = await ctx.idToken({ application, userId, scopes, nonce: null, authTime: null });
  return mapTokenResponse(issued, 'device', ctx.tokens.lifetime(issued.row), idToken);
}
