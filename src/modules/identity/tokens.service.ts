import { auditAuthor, auditEntry, withSudo, type AuditAuthor, type AuditEntityType } from '../../infra/audit.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { TOKEN_PREFIX, digestToken, generateToken } from '../../infra/crypto.js';
import { EpochCache, type Database, type Executor, type Transact } from '../../infra/db/index.js';
import { API_SCOPES, type Actor, type CredentialKind, type ResolvedToken } from '../../infra/auth/index.js';
import { ForbiddenError, NotFoundError, ValidationError, type ValidationMessages } from '../../infra/errors/index.js';
import type { TokensRepository, TokenKind, TokenListFilter, TokenRow } from './tokens.repository.js';
import { toActorUser } from './users.service.js';

export interface CreateTokenInput {
  name: string;
  scopes: readonly string[];
  /** `YYYY-MM-DD`; the token stops working at the start of that day (UTC). */
  expires_at?: string | null | undefined;
}

export interface CreatedToken {
  row: TokenRow;
  /** The secret, shown once. */
  token: string;
}

/**
 * Who acts on a token, for the audit trail (and, for a project's or group's token, that
 * entity); without it the token's creator is named, as for tokens made at start-up.
 */
export interface TokenAudit {
  by?: Actor | null;
  entity?: { type: AuditEntityType; id: number; path: string | null };
  /** No person acted: the server did (a replayed rotated-out token revokes its family). */
  system?: boolean;
  /** The address of the request, when no actor carries it. */
  ip?: string | null;
}

/** Each kind's name in audit events (`personal_access_token_created`, …). */
const AUDIT_NAME: Record<TokenKind, string> = {
  personal: 'personal_access_token',
  impersonation: 'impersonation_token',
  project: 'project_access_token',
  group: 'group_access_token',
};
const AUDIT_TARGET: Record<TokenKind, string> = {
  personal: 'PersonalAccessToken',
  impersonation: 'PersonalAccessToken',
  project: 'ProjectAccessToken',
  group: 'GroupAccessToken',
};

const DAY_MS = 86_400_000;
/** Rotation without `expires_at` gives a week, as the established product does. */
const ROTATION_DAYS = 7;
/** Scopes a token may carry only when its owner is an administrator (reference §1.5 `ADMIN_SCOPES`). */
const ADMIN_SCOPES: readonly string[] = ['sudo', 'admin_mode'];
const USER_SCOPES = API_SCOPES.filter((s) => !ADMIN_SCOPES.includes(s));
/** The scopes a user's token may carry: the admin scopes only for an administrator. */
export const tokenScopesFor = (isAdmin: boolean): readonly string[] => (isAdmin ? API_SCOPES : USER_SCOPES);
const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;
const TOUCH_INTERVAL_MS = 60_000;

const KIND_TO_CREDENTIAL: Record<TokenKind, CredentialKind> = {
  personal: 'personal_token',
  impersonation: 'impersonation_token',
  project: 'project_token',
  group: 'group_token',
};
/** The credentials that are the user's own, which may mint the user a personal token. */
const OWN_CREDENTIALS: ReadonlySet<CredentialKind> = new Set<CredentialKind>(['personal_token', 'session']);
/** The credentials whose row is in this module's token table (what `/personal_access_tokens/self` may name). */
export const TABLE_TOKEN_CREDENTIALS: ReadonlySet<CredentialKind> = new Set(Object.values(KIND_TO_CREDENTIAL));

export function parseExpiry(value: string | null | undefined, now: number, messages: ValidationMessages): number | null {
  if (value === undefined || value === null || value === '') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : NaN;
  if (!match || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    messages.expires_at = ['is invalid'];
    return null;
  }
  if (ms <= now) messages.expires_at = ['must be in the future'];
  return ms;
}

/** `YYYY-MM-DD` of the instant `days` days after `now` (UTC). */
const dateAfter = (now: number, days: number) => new Date(now + days * DAY_MS).toISOString().slice(0, 10);

export function validateScopes(scopes: readonly string[], allowed: readonly string[], messages: ValidationMessages): void {
  if (scopes.length === 0) messages.scopes = ["can't be blank"];
  else if (scopes.some((s) => !allowed.includes(s))) messages.scopes = ['can only contain available scopes'];
}

/**
 * Personal, impersonation, project and group access tokens. Secrets are random, prefixed
 * `bsp_` and stored as SHA-256 digests. A found token is kept briefly, and only while the
 * credentials cache epoch (bumped by every revocation and block, in any process) holds;
 * `last_used_at` is written at most once a minute per token, in batches.
 */
export class TokensService {
  private readonly resolved: EpochCache<ResolvedToken | undefined>;
  private readonly lastTouched = new Map<number, number>();
  private readonly pendingTouches = new Set<number>();
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Database,
    private readonly tokens: TokensRepository,
    private readonly clock: Clock,
    /** MAX_ACCESS_TOKEN_LIFETIME_DAYS: no new token lives longer. */
    private readonly maxLifetimeDays: number,
    private readonly bus: DomainEventBus,
    /**
     * The database's write transactions: on SQLite the shared commit (infra/db/write-batcher.ts),
     * so tokens created at once share one commit's log pages, their audit rows' included.
     */
    private readonly transact: Transact,
  ) {
    this.resolved = new EpochCache({ db, epochs: ['credentials'], clock, ttlMs: CACHE_TTL_MS, maxEntries: CACHE_MAX });
  }

  /**
   * A user's own new personal token. Only the user's own credentials mint one: an OAuth token
   * (lent to an application), an impersonation token (an administrator's, which impersonation
   * being turned off must end) and a bot's token would otherwise outlive their revocation as a
   * token of the user's. Sudo mints with the administrator's own token, which qualifies.
   */
  createOwn(actor: Actor, input: CreateTokenInput): Promise<CreatedToken> {
    if (!OWN_CREDENTIALS.has(actor.credential.kind) || actor.user.bot) throw new ForbiddenError('Not permitted to create');
    return this.create(actor.user.id, 'personal', input, { createdById: actor.user.id, audit: { by: actor } });
  }

  async create(
    userId: number,
    kind: TokenKind,
    input: CreateTokenInput,
    options: {
      createdById: number | null;
      executor?: Executor;
      resource?: { kind: 'project' | 'namespace'; id: number; accessLevel: number };
      secret?: string;
      previousTokenId?: number;
      /** BASALT_ROOT_TOKEN only: the operator's own secret keeps the expiry it is given (docs/decisions.md). */
      operatorToken?: boolean;
      /** Who creates it, for the audit trail; `'none'` when the caller records the action itself (rotation). */
      audit?: TokenAudit | 'none';
    },
  ): Promise<CreatedToken> {
    const now = this.clock.now();
    const messages: ValidationMessages = {};
    const repo = options.executor ? this.tokens.on(options.executor) : this.tokens;
    if (input.name.trim() === '') messages.name = ["can't be blank"];
    // A token acts as its owner, so it carries no scope its owner may not hold: the admin scopes
    // need an administrator owner (read only when asked for, and again at each rotation).
    const wantsAdminScopes = input.scopes.some((s) => ADMIN_SCOPES.includes(s));
    validateScopes(input.scopes, wantsAdminScopes && (await repo.ownerIsAdmin(userId)) ? API_SCOPES : USER_SCOPES, messages);
    const expiresAt = options.operatorToken
      ? parseExpiry(input.expires_at, now, messages)
      : this.boundedExpiry(input.expires_at, now, messages);
    if (Object.keys(messages).length > 0) throw new ValidationError(messages);
    const token = options.secret ?? generateToken(TOKEN_PREFIX.personal);
    // The token and its audit event are written in one transaction (the caller's, or one of its own).
    if (!options.executor && options.audit !== 'none') {
      return this.transact((trx) => this.create(userId, kind, input, { ...options, executor: trx, secret: token }));
    }
    const row = await repo.insert({
      userId,
      name: input.name,
      digest: digestToken(token),
      kind,
      scopes: [...new Set(input.scopes)],
      expiresAt,
      createdById: options.createdById,
      now,
      previousTokenId: options.previousTokenId ?? null,
      ...(options.resource
        ? { resourceKind: options.resource.kind, resourceId: options.resource.id, accessLevel: options.resource.accessLevel }
        : {}),
    });
    if (options.executor && options.audit !== 'none') await this.audited(options.executor, row, 'created', options.audit);
    return { row, token };
  }

  /**
   * Publishes `<kind>_<action>` for a token in `executor`'s transaction: its name, scopes and
   * expiry, never its secret. Names not at hand (the creator's, the owner's) are read in it.
   */
  private async audited(
    executor: Executor,
    row: TokenRow,
    action: string,
    context?: TokenAudit,
    extra: Record<string, number | string> = {},
  ) {
    const repo = this.tokens.on(executor);
    const by = context?.by;
    const author: AuditAuthor = context?.system
      ? { authorId: -1, authorName: 'system', ipAddress: context.ip ?? null }
      : by
        ? auditAuthor(by)
        : row.created_by_id !== null
          ? { authorId: row.created_by_id, authorName: (await repo.username(row.created_by_id)) ?? '', ipAddress: null }
          : auditAuthor(null);
    const entity = context?.entity ?? {
      type: 'User' as const,
      id: row.user_id,
      path: author.authorId === row.user_id ? author.authorName : await repo.username(row.user_id),
    };
    const at = this.clock.now();
    await this.bus.publish(
      {
        type: 'audited',
        at,
        entry: auditEntry(author, {
          entityType: entity.type,
          entityId: entity.id,
          entityPath: entity.path,
          targetType: AUDIT_TARGET[row.kind],
          targetId: row.id,
          targetDetails: row.name,
          eventName: `${AUDIT_NAME[row.kind]}_${action}`,
          details: withSudo(
            {
              scopes: row.scopes.split(' '),
              expires_at: row.expires_at === null ? null : new Date(row.expires_at).toISOString().slice(0, 10),
              ...extra,
            },
            by,
          ),
          at,
        }),
      },
      executor,
    );
  }

  /**
   * Every new token expires within MAX_ACCESS_TOKEN_LIFETIME_DAYS: none given is that maximum,
   * later than it is refused, as the established product does (`expires_at` "must be before").
   */
  private boundedExpiry(value: string | null | undefined, now: number, messages: ValidationMessages): number {
    const latest = dateAfter(now, this.maxLifetimeDays);
    const latestMs = Date.parse(latest);
    const expiresAt = parseExpiry(value, now, messages);
    if (expiresAt === null) return latestMs;
    if (expiresAt > latestMs) messages.expires_at = [`must be before ${latest}`];
    return expiresAt;
  }

  /** `YYYY-MM-DD`: the latest expiry a new token may have (MAX_ACCESS_TOKEN_LIFETIME_DAYS from today). */
  latestExpiry(): string {
    return dateAfter(this.clock.now(), this.maxLifetimeDays);
  }

  /** `YYYY-MM-DD` `days` days from today, no later than the latest expiry: what a new token's form offers. */
  suggestedExpiry(days: number): string {
    return dateAfter(this.clock.now(), Math.min(days, this.maxLifetimeDays));
  }

  /**
   * One of the user's own personal tokens, for their settings page (404 otherwise): unlike
   * `getManageable`, an administrator's page shows only their own tokens too.
   */
  async getOwnPersonal(userId: number, id: number): Promise<TokenRow> {
    const row = await this.tokens.findById(id);
    if (!row || row.user_id !== userId || row.kind !== 'personal') throw new NotFoundError('Personal Access Token');
    return row;
  }

  /** The auth port: a secret to its token and owner, or null. */
  async resolve(secret: string): Promise<ResolvedToken | null> {
    const digest = digestToken(secret);
    const value = await this.resolved.through(
      digest,
      async () => {
        const found = await this.tokens.findByDigestWithUser(digest);
        if (!found) return undefined;
        return {
          user: toActorUser(found.user),
          kind: KIND_TO_CREDENTIAL[found.token.kind],
          id: found.token.id,
          scopes: found.token.scopes.split(' ').filter(Boolean),
          expiresAt: found.token.expires_at,
          revoked: found.token.revoked === 1,
        };
      },
      (resolved) => resolved !== undefined,
    );
    return value ?? null;
  }

  /** Queues a `last_used_at` write unless this token was written in the last minute. */
  markUsed(id: number): void {
    const now = this.clock.now();
    if (now - (this.lastTouched.get(id) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.lastTouched.set(id, now);
    this.pendingTouches.add(id);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flushTouches(), 1000);
      this.flushTimer.unref();
    }
  }

  async flushTouches(): Promise<void> {
    this.flushTimer = null;
    const ids = [...this.pendingTouches];
    this.pendingTouches.clear();
    await this.tokens.touch(ids, this.clock.now()).catch(() => undefined);
  }

  async get(id: number): Promise<TokenRow> {
    const row = await this.tokens.findById(id);
    if (!row) throw new NotFoundError('Personal Access Token');
    return row;
  }

  findById(id: number): Promise<TokenRow | undefined> {
    return this.tokens.findById(id);
  }

  /**
   * A token the caller may see, rotate and revoke on `/personal_access_tokens`: its own, or any
   * for an administrator. An impersonation token is an administrator's tool aimed at the user, so
   * the user cannot see or end it there (administrators manage it under `/users/:id/impersonation_tokens`).
   */
  async getManageable(actor: Actor, id: number | 'self'): Promise<TokenRow> {
    // `self` is the token presented, so only a credential kept in the token table has one: the id
    // of a session, an OAuth token or a job is a row of another table and names no token here.
    if (id === 'self' && !TABLE_TOKEN_CREDENTIALS.has(actor.credential.kind)) throw new NotFoundError('Personal Access Token');
    const row = await this.tokens.findById(id === 'self' ? actor.credential.id : id);
    const mayManage = actor.user.isAdmin || (row?.user_id === actor.user.id && row.kind !== 'impersonation');
    if (!row || !mayManage) throw new NotFoundError('Personal Access Token');
    return row;
  }

  /** A page of tokens; `state` is judged now, by this service's clock. */
  list(filter: Omit<TokenListFilter, 'now'>, limit: number, offset: number) {
    return this.tokens.list({ ...filter, now: this.clock.now() }, limit, offset);
  }

  /** Cached lookups end everywhere with the credentials epoch the repository bumps. */
  async revoke(row: TokenRow, audit?: TokenAudit): Promise<void> {
    await this.transact(async (trx) => {
      await this.tokens.on(trx).revoke(row.id);
      await this.audited(trx, row, 'revoked', audit);
    });
  }

  /**
   * A revoked token presented for rotation is a replay of a rotated-out secret (reference §1.3):
   * the whole chain it belongs to is revoked, so the token that replaced it stops working too.
   * When that ended a live token, the audit trail records it (`<kind>_revoked`, author `system`,
   * the replaying address) in the same transaction.
   */
  async revokeFamily(id: number, ip: string | null = null): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const revoked = await this.tokens.on(trx).revokeFamily(id);
      const row = revoked > 0 ? await this.tokens.on(trx).findById(id) : undefined;
      if (!row) return;
      await this.audited(trx, row, 'revoked', { system: true, ip }, { reason: 'rotated_token_reused', revoked_tokens: revoked });
    });
  }

  /** Revokes the token and issues a new one with the same name, scopes and owner. */
  async rotate(row: TokenRow, expiresAt: string | null | undefined, audit?: TokenAudit): Promise<CreatedToken> {
    return this.transact(async (trx) => {
      await this.tokens.on(trx).revoke(row.id);
      const defaultExpiry = dateAfter(this.clock.now(), Math.min(ROTATION_DAYS, this.maxLifetimeDays));
      const created = await this.create(
        row.user_id,
        row.kind,
        { name: row.name, scopes: row.scopes.split(' '), expires_at: expiresAt ?? defaultExpiry },
        {
          createdById: row.created_by_id,
          executor: trx,
          previousTokenId: row.id,
          audit: 'none',
          ...(row.resource_kind && row.resource_id !== null && row.access_level !== null
            ? { resource: { kind: row.resource_kind as 'project' | 'namespace', id: row.resource_id, accessLevel: row.access_level } }
            : {}),
        },
      );
      // One action, one event: the rotation, naming the new token and the one it replaced.
      await this.audited(trx, created.row, 'rotated', audit, { previous_token_id: row.id });
      return created;
    });
  }
}
