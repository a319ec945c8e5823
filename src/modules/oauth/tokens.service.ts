import { auditEntry } from '../../infra/audit.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { ResolvedToken } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import { EpochCache, type Executor } from '../../infra/db/index.js';
import { OAuthInvalidTokenError, UnauthorizedClientError } from '../../infra/errors/index.js';
import { toActorUser } from '../identity/index.js';
import { OAUTH_DEFAULTS } from './oauth.defaults.js';
import type {
  AccessTokenRow,
  ClientApplication,
  OAuthStorage,
  RefreshableToken,
  TokenWithApplication,
  TokenWithContext,
} from './oauth.storage.js';
import { joinScopes, splitScopes } from './scopes.rules.js';
import { formatToken, newTokenSecret, parseToken, provesToken, type PresentedToken } from './token-format.rules.js';

const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

export interface IssueInput {
  application: ClientApplication;
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
 * Access and refresh tokens: the id of their row and a random 256-bit secret, with the
 * `bso_`/`bsr_` prefixes (token-format.ts); the secrets are stored only as SHA-256 digests
 * (RFC 6749 §10.3; checklist B10). A token is read by primary key and proven by its secret.
 * A found token is kept a few seconds and used only while the credentials cache epoch reads
 * as it did when the token was read (infra/db/epochs.ts): every revocation, rotation or
 * blocked owner bumps it in the same transaction, so they hold at once in every process,
 * and a cached answer costs one read of a counter instead of a three-table join.
 */
export class OAuthTokens {
  private readonly found: EpochCache<TokenWithContext | undefined>;
  /** Scopes of the rows `found` holds, split once: a row is the same object while it stays cached. */
  private readonly scopes = new WeakMap<AccessTokenRow, string[]>();

  constructor(
    private readonly storage: OAuthStorage,
    private readonly clock: Clock,
    db: Executor,
    private readonly bus: DomainEventBus,
  ) {
    this.found = new EpochCache({ db, epochs: ['credentials'], clock, ttlMs: CACHE_TTL_MS, maxEntries: CACHE_MAX });
  }
  /**
   * A blocked user's consents end, in the transaction of the block (`executor`): live tokens,
   * unexchanged codes and approved but unredeemed device grants.
   */
  endUserAccess(executor: Executor, userId: number, now: number): Promise<void> {
    return this.storage.on(executor).endUserAccess(userId, now);
  }

  /** The access token's row and owner when the secret proves it (kept while the epoch holds). */
  private async findAccess(presented: PresentedToken): Promise<TokenWithContext | undefined> {
    // Keyed by the secret's digest: a cached row is only ever handed to the holder of its secret.
    const found = await this.found.through(
      presented.digest,
      async () => {
        const row = await this.storage.findTokenWithOwner(presented.id);
        return row && provesToken(presented, row.token.token_digest) ? row : undefined;
      },
      (row) => row !== undefined,
    );
    return found?.token.id === presented.id ? found : undefined;
  }

  /** The refresh token's row and application when the secret proves it; read through `storage` (a transaction's). */
  async findRefresh(storage: OAuthStorage, presented: PresentedToken): Promise<TokenWithApplication | undefined> {
    if (presented.kind !== 'refresh') return undefined;
    const row = await storage.findTokenWithApplication(presented.id);
    return row && provesToken(presented, row.token.refresh_digest) ? row : undefined;
  }

  async issue(storage: OAuthStorage, input: IssueInput): Promise<IssuedToken> {
    const now = this.clock.now();
    const access = newTokenSecret();
    const refresh = input.withRefresh ? newTokenSecret() : null;
    const row = await storage.insertToken({
      application_id: input.application.id,
      user_id: input.userId,
      token_digest: access.digest,
      refresh_digest: refresh ? refresh.digest : null,
      scopes: joinScopes(input.scopes),
      family: input.family,
      previous_id: input.previousId ?? null,
      redirect_uri: input.redirectUri ?? null,
      expires_at: now + OAUTH_DEFAULTS.accessTokenTtlSeconds * 1000,
      created_at: now,
    });
    return {
      accessToken: formatToken('access', row.id, access.secret),
      refreshToken: refresh ? formatToken('refresh', row.id, refresh.secret) : null,
      row,
    };
  }

  /** The auth port (infra/auth): any found token; the hook itself rejects expired and revoked ones. */
  async resolve(secret: string): Promise<ResolvedToken | null> {
    const presented = parseToken(secret);
    if (presented?.kind !== 'access') return null;
    const found = await this.findAccess(presented);
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
    const presented = secret === undefined ? null : parseToken(secret);
    return presented ? this.live(presented) : null;
  }

  /** `active` for a parsed token: a refresh token is never a live access token. */
  private async live(presented: PresentedToken): Promise<ActiveToken | null> {
    if (presented.kind !== 'access') return null;
    const found = await this.findAccess(presented);
    if (!found || found.token.revoked === 1 || found.user.state !== 'active') return null;
    if (found.token.expires_at !== null && found.token.expires_at <= this.clock.now()) return null;
    return { token: found.token, user: found.user, applicationUid: found.applicationUid, scopes: this.scopesOf(found.token) };
  }

  /** A cached row's scopes, split once. */
  private scopesOf(token: AccessTokenRow): string[] {
    let scopes = this.scopes.get(token);
    if (!scopes) {
      scopes = splitScopes(token.scopes);
      this.scopes.set(token, scopes);
    }
    return scopes;
  }

  async require(secret: string | undefined): Promise<ActiveToken> {
    const token = await this.active(secret);
    if (!token) throw new OAuthInvalidTokenError();
    return token;
  }

  /**
   * RFC 7009 §2.1: the token's prefix says what it is, so `token_type_hint` is not needed
   * (§2.1 lets the server ignore it); an unknown token is a success (§2.2). Another client's
   * token is refused and left alone. Revoking a refresh token ends its whole family (§2.1
   * SHOULD; checklist B7); an access token's row carries its refresh token, so both end together.
   */
  async revoke(application: ClientApplication, secret: string, ip: string | null = null): Promise<void> {
    const presented = parseToken(secret);
    if (!presented) return;
    const token =
      presented.kind === 'access' ? (await this.findAccess(presented))?.token : (await this.findRefresh(this.storage, presented))?.token;
    if (!token) return;
    if (token.application_id !== application.id) {
      throw new UnauthorizedClientError('You are not authorized to revoke this token', 403);
    }
    const now = this.clock.now();
    await this.storage.transaction(async (storage, executor) => {
      if (presented.kind === 'refresh') await storage.revokeFamily(token.family, now);
      else await storage.revokeToken(token.id, now);
      // The client revokes (RFC 7009): the event is the token's user's, authored by no person.
      const entry = auditEntry(
        { authorId: -1, authorName: 'OAuth application', ipAddress: ip },
        {
          entityType: 'User',
          entityId: token.user_id,
          entityPath: null,
          targetType: 'Doorkeeper::AccessToken',
          targetId: token.id,
          targetDetails: null,
          eventName: 'oauth_access_token_revoked',
          details: { application_id: application.id, client_id: application.uid, token_type_hint: presented.kind },
          at: now,
        },
      );
      await this.bus.publish({ type: 'audited', entry, at: now }, executor);
    });
  }

  /**
   * A replayed refresh token or code revokes every live token of its family (reuse detection,
   * RFC 9700 §4.14.2); when that ended any, the audit trail records it in the same transaction,
   * authored by `system`, about the tokens' user, with the address that replayed it.
   */
  async revokeReusedFamily(
    storage: OAuthStorage,
    executor: Executor,
    reuse: {
      family: string;
      userId: number | null;
      application: { id: number; uid: string };
      tokenId: number | null;
      reason: string;
      ip: string;
    },
    now: number,
  ): Promise<void> {
    const revoked = await storage.revokeFamily(reuse.family, now);
    if (revoked === 0 || reuse.userId === null) return;
    const entry = auditEntry(
      { authorId: -1, authorName: 'system', ipAddress: reuse.ip },
      {
        entityType: 'User',
        entityId: reuse.userId,
        entityPath: null,
        targetType: 'Doorkeeper::AccessToken',
        targetId: reuse.tokenId,
        targetDetails: null,
        eventName: 'oauth_access_token_revoked',
        details: { application_id: reuse.application.id, client_id: reuse.application.uid, reason: reuse.reason, revoked_tokens: revoked },
        at: now,
      },
    );
    await this.bus.publish({ type: 'audited', entry, at: now }, executor);
  }

  /**
   * RFC 7662 for the authenticated client's own tokens: anything else, and any token that is
   * not live, is only `{active: false}` (checklist B12).
   */
  async introspect(application: ClientApplication, secret: string): Promise<Record<string, unknown>> {
    const inactive = { active: false };
    const presented = parseToken(secret);
    if (!presented) return inactive;
    if (presented.kind === 'access') {
      const asAccess = await this.live(presented);
      if (!asAccess || asAccess.token.application_id !== application.id) return inactive;
      return this.describe(asAccess.token, asAccess.applicationUid, asAccess.user.username, 'access_token');
    }
    const asRefresh = await this.findRefresh(this.storage, presented);
    if (!asRefresh || asRefresh.token.revoked === 1 || asRefresh.token.application_id !== application.id) return inactive;
    return this.describe(asRefresh.token, asRefresh.application.uid, null, 'refresh_token');
  }

  private describe(token: RefreshableToken, clientId: string, username: string | null, kind: string): Record<string, unknown> {
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
