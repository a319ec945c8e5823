import type { ResolvedToken } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import { TOKEN_PREFIX, digestToken, generateToken } from '../../infra/crypto.js';
import { EpochCache, type Executor } from '../../infra/db/index.js';
import { OAuthInvalidTokenError, UnauthorizedClientError } from '../../infra/errors/index.js';
import { toActorUser } from '../identity/index.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';
import type { AccessTokenRow, ApplicationRow, OAuthStorage, TokenWithContext } from './oauth.storage.js';
import { joinScopes, splitScopes } from './scopes.js';

const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export interface IssueInput {
  application: ApplicationRow;
  userId: number;
  scopes: readonly string[];
  family: string;
  previousId?: number | null;
  redirectUri?: string | null;
  withRefresh: boolean;
}

export interface IssuedToken {
  accessToken: string;
  refreshToken: string | null;
  row: AccessTokenRow;
}

/** A token that is live now: found, not revoked, not expired. */
export interface ActiveToken extends TokenWithContext {
  scopes: string[];
}

/**
 * Access and refresh tokens: random 256-bit secrets with the `bso_`/`bsr_` prefixes, stored
 * only as SHA-256 digests (RFC 6749 §10.3; checklist B10), looked up in one indexed query.
 * A found token is kept a few seconds and used only while the credentials cache epoch reads
 * as it did when the token was read (infra/db/epochs.ts): every revocation, rotation or
 * blocked owner bumps it in the same transaction, so they hold at once in every process,
 * and a cached answer costs one read of a counter instead of a three-table join.
 */
export class OAuthTokens {
  private readonly found: EpochCache<TokenWithContext | undefined>;

  constructor(
    private readonly storage: OAuthStorage,
    private readonly clock: Clock,
    db: Executor,
  ) {
    this.found = new EpochCache({ db, epochs: ['credentials'], clock, ttlMs: CACHE_TTL_MS, maxEntries: CACHE_MAX });
  }

  private findByDigest(digest: string): Promise<TokenWithContext | undefined> {
    return this.found.through(
      digest,
      () => this.storage.findTokenByAccessDigest(digest),
      (found) => found !== undefined,
    );
  }

  async issue(storage: OAuthStorage, input: IssueInput): Promise<IssuedToken> {
    const now = this.clock.now();
    const accessToken = generateToken(TOKEN_PREFIX.oauthAccess, OAUTH_DEFAULTS.secretBytes);
    const refreshToken = input.withRefresh ? generateToken(TOKEN_PREFIX.oauthRefresh, OAUTH_DEFAULTS.secretBytes) : null;
    const row = await storage.insertToken({
      application_id: input.application.id,
      user_id: input.userId,
      token_digest: digestToken(accessToken),
      refresh_digest: refreshToken ? digestToken(refreshToken) : null,
      scopes: joinScopes(input.scopes),
      family: input.family,
      previous_id: input.previousId ?? null,
      redirect_uri: input.redirectUri ?? null,
      expires_at: now + OAUTH_DEFAULTS.accessTokenTtlSeconds * 1000,
      created_at: now,
    });
    return { accessToken, refreshToken, row };
  }

  /** The auth port (infra/auth): any found token; the hook itself rejects expired and revoked ones. */
  async resolve(secret: string): Promise<ResolvedToken | null> {
    if (!secret.startsWith(TOKEN_PREFIX.oauthAccess)) return null;
    const found = await this.findByDigest(digestToken(secret));
    if (!found) return null;
    return {
      user: toActorUser(found.user),
      kind: 'oauth_token',
      id: found.token.id,
      scopes: splitScopes(found.token.scopes),
      expiresAt: found.token.expires_at,
      revoked: found.token.revoked === 1,
      applicationUid: found.applicationUid,
    };
  }

  /** A live access token or null (unknown, revoked, expired, or its owner is blocked). */
  async active(secret: string | undefined): Promise<ActiveToken | null> {
    if (secret === undefined || !secret.startsWith(TOKEN_PREFIX.oauthAccess)) return null;
    const found = await this.findByDigest(digestToken(secret));
    if (!found || found.token.revoked === 1 || found.user.state !== 'active') return null;
    if (found.token.expires_at !== null && found.token.expires_at <= this.clock.now()) return null;
    return { ...found, scopes: splitScopes(found.token.scopes) };
  }

  async require(secret: string | undefined): Promise<ActiveToken> {
    const token = await this.active(secret);
    if (!token) throw new OAuthInvalidTokenError();
    return token;
  }

  /**
   * RFC 7009 §2.1: the token is looked up as the hint says first, then as the other kind; an
   * unknown token is a success (§2.2). Another client's token is refused and left alone.
   * Revoking a refresh token ends its whole family (§2.1 SHOULD; checklist B7); an access
   * token's row carries its refresh token, so both end together.
   */
  async revoke(application: ApplicationRow, secret: string, hint: string | undefined): Promise<void> {
    const digest = digestToken(secret);
    const byAccess = async () => (await this.storage.findTokenByAccessDigest(digest))?.token;
    const byRefresh = async () => (await this.storage.findTokenByRefreshDigest(digest))?.token;
    const asRefresh = hint === 'refresh_token' || secret.startsWith(TOKEN_PREFIX.oauthRefresh);
    let token: AccessTokenRow | undefined;
    let isRefresh = false;
    if (asRefresh) {
      token = await byRefresh();
      isRefresh = token !== undefined;
      token ??= await byAccess();
    } else {
      token = await byAccess();
      if (!token) {
        token = await byRefresh();
        isRefresh = token !== undefined;
      }
    }
    if (!token) return;
    if (token.application_id !== application.id) {
      throw new UnauthorizedClientError('You are not authorized to revoke this token', 403);
    }
    const now = this.clock.now();
    if (isRefresh) await this.storage.revokeFamily(token.family, now);
    else await this.storage.revokeToken(token.id, now);
  }

  /**
   * RFC 7662 for the authenticated client's own tokens: anything else, and any token that is
   * not live, is only `{active: false}` (checklist B12).
   */
  async introspect(application: ApplicationRow, secret: string): Promise<Record<string, unknown>> {
    const inactive = { active: false };
    const digest = digestToken(secret);
    const asAccess = await this.active(secret);
    if (asAccess) {
      if (asAccess.token.application_id !== application.id) return inactive;
      return this.describe(asAccess.token, asAccess.applicationUid, asAccess.user.username, 'access_token');
    }
    const asRefresh = secret.startsWith(TOKEN_PREFIX.oauthRefresh) ? await this.storage.findTokenByRefreshDigest(digest) : undefined;
    if (!asRefresh || asRefresh.token.revoked === 1 || asRefresh.token.application_id !== application.id) return inactive;
    return this.describe(asRefresh.token, asRefresh.application.uid, null, 'refresh_token');
  }

  private describe(token: AccessTokenRow, clientId: string, username: string | null, kind: string): Record<string, unknown> {
    return {
      active: true,
      scope: token.scopes,
      client_id: clientId,
      ...(username ? { username } : {}),
      token_type: kind === 'access_token' ? 'Bearer' : 'refresh_token',
      ...(kind === 'access_token' && token.expires_at !== null ? { exp: Math.floor(token.expires_at / 1000) } : {}),
      iat: Math.floor(token.created_at / 1000),
      sub: String(token.user_id),
    };
  }

  /** `expires_in` of a token response: the lifetime it was issued with (7200). */
  lifetime(row: AccessTokenRow): number {
    return row.expires_at === null ? 0 : Math.round((row.expires_at - row.created_at) / 1000);
  }

  expiresIn(row: AccessTokenRow): number | null {
    if (row.expires_at === null) return null;
    return Math.max(0, Math.floor((row.expires_at - this.clock.now()) / 1000));
  }
}
