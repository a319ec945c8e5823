import type { Executor } from '../../../infra/db/index.js';
import { InvalidGrantError, InvalidScopeError, OAuthError } from '../../../infra/errors/index.js';
import { authenticateClient, checkClient } from '../client-auth.service.js';
import { mapTokenResponse } from '../oauth.presenter.js';
import type { ClientApplication, OAuthStorage } from '../oauth.storage.js';
import { requireParam } from '../params.rules.js';
import { parseScope, splitScopes } from '../scopes.rules.js';
import { parseToken, type PresentedToken } from '../token-format.rules.js';
import type { IssuedToken } from '../tokens.service.js';
import type { GrantContext, TokenResponse } from './grant-context.js';

/** What the transaction of a refresh came to; refusals are values, so a shared commit is not rolled back for them. */
type Outcome =
  | { issued: IssuedToken; application: ClientApplication; scopes: string[] }
  | { refused: OAuthError }
  /** No such refresh token for this client: the client is authenticated on its own first (§10.4). */
  | { unknown: true };

const USED = 'The refresh token is invalid or was already used.';

/**
 * `grant_type=refresh_token` with rotation (RFC 6749 §6, RFC 9700 §4.14.2, checklist B5).
 * The whole exchange runs in one write transaction (on SQLite, one of the shared commits of
 * infra/db/write-batcher.ts): the token is read by the id it carries, the client and the
 * request checked, the old pair revoked by a conditional UPDATE only one concurrent request
 * can win, and the new pair stored. A refresh token that was already rotated out (replay, or
 * the loser of a race) revokes its whole family in the same transaction. Refusals are
 * returned, not thrown, so they never roll back the other requests of a shared commit.
 */
export async function refreshTokenGrant(ctx: GrantContext): Promise<TokenResponse> {
  const presented = parseToken(requireParam(ctx.params, 'refresh_token'));
  const outcome: Outcome = presented
    ? await ctx.storage.transaction((storage, executor) => exchange(ctx, storage, executor, presented))
    : { unknown: true };
  if ('unknown' in outcome) {
    await authenticateClient(ctx.storage, ctx.credentials);
    throw new InvalidGrantError();
  }
  if ('refused' in outcome) throw outcome.refused;
  const { issued, application, scopes } = outcome;
  const idToken = await ctx.idToken({ application, userId: issued.row.user_id, scopes, nonce: null, authTime: null });
  return mapTokenResponse(issued, 'code', ctx.tokens.lifetime(issued.row), idToken);
}

async function exchange(ctx: GrantContext, storage: OAuthStorage, executor: Executor, presented: PresentedToken): Promise<Outcome> {
  const found = await ctx.tokens.findRefresh(storage, presented);
  if (!found || ctx.credentials.clientId !== found.application.uid) return { unknown: true };
  let application: ClientApplication;
  try {
    application = checkClient(found.application, ctx.credentials);
  } catch (error) {
    if (error instanceof OAuthError) return { refused: error };
    throw error;
  }
  const { token } = found;
  const now = ctx.clock.now();
  // A replay (or the loser of a race) revokes the family, recorded as the system's revocation.
  const reuse = { family: token.family, userId: token.user_id, application, tokenId: token.id, reason: 'refresh_token_reused', ip: ctx.ip };
  if (token.revoked === 1) {
    if (token.rotated === 1) await ctx.tokens.revokeReusedFamily(storage, executor, reuse, now);
    return { refused: new InvalidGrantError(USED) };
  }
  const redirectUri = ctx.params.get('redirect_uri');
  if (redirectUri !== undefined && redirectUri !== token.redirect_uri) {
    return { refused: new InvalidGrantError('redirect_uri does not match the one of the original authorization.') };
  }
  const current = splitScopes(token.scopes);
  const requested = parseScope(ctx.params.get('scope'));
  if (requested === null || requested.some((s) => !current.includes(s))) {
    return { refused: new InvalidScopeError('The requested scope exceeds the scope granted by the resource owner.') };
  }
  const scopes = requested.length > 0 ? requested : current;
  // Read in this transaction, the row can only have changed on PostgreSQL, where a concurrent
  // refresh may commit first: the UPDATE then matches nothing and this one lost the race.
  if (!(await storage.rotateToken(token.id, now))) {
    await ctx.tokens.revokeReusedFamily(storage, executor, reuse, now);
    return { refused: new InvalidGrantError(USED) };
  }
  const issued = await ctx.tokens.issue(storage, {
    application,
    userId: token.user_id,
    scopes,
    family: token.family,
    previousId: token.id,
    redirectUri: token.redirect_uri,
    withRefresh: true,
  });
  return { issued, application, scopes };
}
