import type { Clock } from '../clock.js';
import type { Actor } from './actor.js';
import type { ResolvedToken, ResolverRegistry } from './resolvers.js';

/** Why a found token was refused; each caller answers it in its own dialect (API JSON, git text). */
export type TokenRefusalReason = 'expired' | 'revoked' | 'impersonation_disabled' | 'blocked';

/** A token that exists but may not act. Carries the token so a caller can act on it (rotation replay). */
export class TokenRefusal extends Error {
  constructor(
    readonly reason: TokenRefusalReason,
    readonly token: ResolvedToken,
  ) {
    super(`token refused: ${reason}`);
  }
}

export interface TokenAuthDeps {
  readonly resolvers: ResolverRegistry;
  readonly clock: Clock;
  readonly config: { readonly impersonationEnabled: boolean };
}

/** An accepted token and the actor it makes. */
export interface TokenActor {
  actor: Actor;
  token: ResolvedToken;
}

/**
 * Which tables a secret is looked up in. The API tries its OAuth-style string as an OAuth token
 * only, then its PAT string as a PAT only (reference §1.2); git's password may be either.
 */
export type TokenTables = 'oauth' | 'access' | 'any';

const OAUTH_PREFIX = 'bso_';
const PERSONAL_PREFIX = 'bsp_';

/**
 * The one way a token becomes an actor, for the API's auth hook and git's smart HTTP alike, so a
 * rule added here holds for both. Unknown secret: `null` (the caller's 401). A found token is
 * checked in AccessTokenValidationService's order (expired, revoked, impersonation disabled; the
 * scope check is the caller's, it depends on the route), then its user must not be blocked;
 * a failing check throws a TokenRefusal. An accepted token costs no more than its lookup.
 */
export async function authenticateToken(deps: TokenAuthDeps, secret: string, tables: TokenTables): Promise<TokenActor | null> {
  const token = await findToken(deps.resolvers, secret, tables);
  if (!token) return null;
  if (token.expiresAt !== null && token.expiresAt <= deps.clock.now()) throw new TokenRefusal('expired', token);
  if (token.revoked) throw new TokenRefusal('revoked', token);
  if (token.kind === 'impersonation_token' && !deps.config.impersonationEnabled) throw new TokenRefusal('impersonation_disabled', token);
  if (token.user.state === 'blocked') throw new TokenRefusal('blocked', token);
  return {
    actor: {
      user: token.user,
      credential: {
        kind: token.kind,
        id: token.id,
        scopes: token.scopes,
        ...(token.applicationUid ? { applicationUid: token.applicationUid } : {}),
      },
    },
    token,
  };
}

/** The prefix names the table (DESIGN.md §4), so a prefixed secret costs one indexed lookup. */
async function findToken(resolvers: ResolverRegistry, secret: string, tables: TokenTables): Promise<ResolvedToken | null> {
  const { accessToken, oauthToken } = resolvers.current;
  if (tables !== 'access' && secret.startsWith(OAUTH_PREFIX)) return oauthToken ? oauthToken(secret) : null;
  if (tables === 'oauth') return secret.startsWith(PERSONAL_PREFIX) || !oauthToken ? null : oauthToken(secret);
  if (secret.startsWith(OAUTH_PREFIX)) return null;
  const found = accessToken ? await accessToken(secret) : null;
  if (found || tables === 'access' || secret.startsWith(PERSONAL_PREFIX)) return found;
  return oauthToken ? oauthToken(secret) : null;
}
