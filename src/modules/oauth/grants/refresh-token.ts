import { digestToken } from '../../../infra/crypto.js';
import { InvalidGrantError, InvalidScopeError } from '../../../infra/errors/index.js';
import { authenticateClient, checkClient } from '../client-auth.js';
import { mapTokenResponse } from '../oauth.presenter.js';
import { requireParam } from '../params.js';
import { parseScope, splitScopes } from '../scopes.js';
import { LostRace, type GrantContext, type TokenResponse } from './grant-context.js';

/**
 * `grant_type=refresh_token` with rotation (RFC 6749 §6, RFC 9700 §4.14.2, checklist B5).
 * The old pair is revoked in the same transaction that stores the new one, by a conditional
 * UPDATE only one concurrent request can win. A refresh token that was already rotated out
 * (replay, or the loser of a race) revokes its whole family. Cost on success: one indexed
 * read (token joined with its application), one UPDATE, one INSERT.
 */
export async function refreshTokenGrant(ctx: GrantContext): Promise<TokenResponse> {
  const refreshToken = requireParam(ctx.params, 'refresh_token');
  const found = await ctx.storage.findTokenByRefreshDigest(digestToken(refreshToken));
  if (!found || ctx.credentials.clientId !== found.application.uid) {
    // Authenticate first so a bad client hears invalid_client, then refuse the grant (§10.4).
    await authenticateClient(ctx.storage, ctx.credentials);
    throw new InvalidGrantError();
  }
  const application = checkClient(found.application, ctx.credentials);
  const { token } = found;
  const now = ctx.clock.now();
  if (token.revoked === 1) {
    if (token.rotated === 1) await ctx.storage.revokeFamily(token.family, now);
    throw new InvalidGrantError('The refresh token is invalid or was already used.');
  }
  const redirectUri = ctx.params.get('redirect_uri');
  if (redirectUri !== undefined && redirectUri !== token.redirect_uri) {
    throw new InvalidGrantError('redirect_uri does not match the one of the original authorization.');
  }
  const current = splitScopes(token.scopes);
  const requested = parseScope(ctx.params.get('scope'));
  if (requested === null || requested.some((s) => !current.includes(s))) {
    throw new InvalidScopeError('The requested scope exceeds the scope granted by the resource owner.');
  }
  const scopes = requested.length > 0 ? requested : current;

  let issued;
  try {
    issued = await ctx.storage.transaction(async (storage) => {
      if (!(await storage.rotateToken(token.id, now))) throw new LostRace(token.family);
      return ctx.tokens.issue(storage, {
        application,
        userId: token.user_id,
        scopes,
        family: token.family,
        previousId: token.id,
        redirectUri: token.redirect_uri,
        withRefresh: true,
      });
    });
  } catch (error) {
    if (!(error instanceof LostRace)) throw error;
    await ctx.storage.revokeFamily(error.family, ctx.clock.now());
    throw new InvalidGrantError('The refresh token is invalid or was already used.');
  }
  const idToken = await ctx.idToken({ application, userId: token.user_id, scopes, nonce: null, authTime: null });
  return mapTokenResponse(issued, 'code', ctx.tokens.lifetime(issued.row), idToken);
}
