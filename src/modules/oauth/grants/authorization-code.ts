import { digestToken } from '../../../infra/crypto.js';
import { InvalidGrantError } from '../../../infra/errors/index.js';
import { authenticateClient } from '../client-auth.service.js';
import { mapTokenResponse } from '../oauth.presenter.js';
import { requireParam } from '../params.rules.js';
import { verifyPkce } from '../pkce.rules.js';
import { splitScopes } from '../scopes.rules.js';
import { LostRace, type GrantContext, type TokenResponse } from './grant-context.js';

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.6, checklist B1/B2): the
 * code must belong to the authenticated client, be unused and at most 60 s old, come with
 * the same redirect_uri and the PKCE verifier. A second use is refused and revokes every
 * token the first use issued (RFC 6749 §4.1.2).
 */
export async function authorizationCodeGrant(ctx: GrantContext): Promise<TokenResponse> {
  const application = await authenticateClient(ctx.storage, ctx.credentials);
  const code = requireParam(ctx.params, 'code');
  const redirectUri = requireParam(ctx.params, 'redirect_uri');
  const grant = await ctx.storage.findGrantByDigest(digestToken(code));
  if (!grant || grant.application_id !== application.id) throw new InvalidGrantError();

  const now = ctx.clock.now();
  const reuse = {
    family: grant.family,
    userId: grant.user_id,
    application,
    tokenId: null,
    reason: 'authorization_code_reused',
    ip: ctx.ip,
  };
  if (grant.consumed_at !== null) {
    await ctx.storage.transaction((storage, executor) => ctx.tokens.revokeReusedFamily(storage, executor, reuse, now));
    throw new InvalidGrantError('The authorization code has already been used; tokens issued from it are revoked.');
  }
  if (grant.expires_at <= now) throw new InvalidGrantError('The authorization code has expired.');
  if (grant.redirect_uri !== redirectUri) throw new InvalidGrantError('redirect_uri does not match the one of the authorization request.');
  verifyPkce({ challenge: grant.code_challenge, method: grant.code_challenge_method }, ctx.params.get('code_verifier'));

  const scopes = splitScopes(grant.scopes);
  let issued;
  try {
    issued = await ctx.storage.transaction(async (storage) => {
      if (!(await storage.consumeGrant(grant.id, now))) throw new LostRace(grant.family);
      return ctx.tokens.issue(storage, {
        application,
        userId: grant.user_id,
        scopes,
        family: grant.family,
        redirectUri: grant.redirect_uri,
        withRefresh: true,
      });
    });
  } catch (error) {
    if (!(error instanceof LostRace)) throw error;
    await ctx.storage.transaction((storage, executor) => ctx.tokens.revokeReusedFamily(storage, executor, reuse, ctx.clock.now()));
    throw new InvalidGrantError('The authorization code has already been used; tokens issued from it are revoked.');
  }
  const idToken = await ctx.idToken({ application, userId: grant.user_id, scopes, nonce: grant.nonce, authTime: grant.auth_time });
  return mapTokenResponse(issued, 'code', ctx.tokens.lifetime(issued.row), idToken);
}
