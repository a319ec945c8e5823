import { randomBytes } from 'node:crypto';
import type { Actor } from '../../infra/auth/index.js';
import type { Config } from '../../config/index.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor } from '../../infra/db/index.js';
import { BadRequestError, ForbiddenError, NotFoundError, ValidationError, type ValidationMessages } from '../../infra/errors/index.js';
import type { TokenRow, TokenState } from './tokens.repository.js';
import { parseExpiry, validateScopes, type CreatedToken, type TokensService } from './tokens.service.js';
import type { UsersService } from './users.service.js';

export type ResourceKind = 'project' | 'group';

/** The project or group a token is for, and the caller's access level there. */
export interface ResourceRef {
  readonly kind: ResourceKind;
  readonly id: number;
  readonly level: number;
  /** The project's or group's full path, named by the audit trail. */
  readonly path?: string;
}

/** A project's or group's token events are that entity's in the audit trail. */
const auditOf = (actor: Actor, resource: ResourceRef) => ({
  by: actor,
  entity: { type: resource.kind === 'project' ? ('Project' as const) : ('Group' as const), id: resource.id, path: resource.path ?? null },
});

/** What this service needs from the projects module (its MembersService fits). */
export interface MembershipPort {
  addTokenBot(
    actor: Actor,
    kind: 'namespace' | 'project',
    sourceId: number,
    actorLevel: number,
    input: { user_id: number; access_level: number },
    projectIdForEvents: number | null,
    executor: Executor,
  ): Promise<unknown>;
  get(kind: 'namespace' | 'project', sourceId: number, userId: number): Promise<{ access_level: number }>;
  remove(
    actor: { userId: number; level: number; ip?: string | undefined },
    kind: 'namespace' | 'project',
    sourceId: number,
    userId: number,
    projectIdForEvents: number | null,
  ): Promise<void>;
}

export interface ResourceTokenInput {
  name: string;
  scopes: readonly string[];
  access_level?: number | undefined;
  expires_at?: string | null | undefined;
}

/** Bot tokens carry the non-admin scopes except `read_user` (reference §1.5 `resource_bot_scopes`). */
export const RESOURCE_TOKEN_SCOPES = ['api', 'read_api', 'read_repository', 'write_repository'] as const;
const LEVELS = [10, 20, 30, 40, 50];
const DEFAULT_LEVEL = 40;
/**
 * The least role that manages a resource's tokens, as in the established product: Maintainers
 * manage project tokens (up to their own level), only Owners manage group tokens.
 */
export const TOKEN_MANAGER_LEVEL: Readonly<Record<ResourceKind, number>> = { project: 40, group: 50 };

const label = (kind: ResourceKind) => (kind === 'project' ? 'Project' : 'Group');
const memberKind = (kind: ResourceKind) => (kind === 'project' ? 'project' : 'namespace');

/**
 * Project and group access tokens. Each token belongs to its own bot user, a member of the
 * project or group at the token's access level, so the ordinary access rules apply to it.
 * User, membership and token are written in one transaction.
 */
export class ResourceTokensService {
  constructor(
    private readonly db: Database,
    private readonly users: UsersService,
    private readonly tokens: TokensService,
    private readonly config: Config,
    private readonly clock: Clock,
  ) {}

  /** SPEC "What the service does": on the hosted offering these need Premium or Ultimate. */
  checkAvailable(kind: ResourceKind): void {
    if (this.config.offering === 'hosted' && this.config.tier === 'free') {
      throw new ForbiddenError(`${label(kind)} access tokens need the Premium or Ultimate tier on the hosted offering`);
    }
  }

  async create(actor: Actor, resource: ResourceRef, input: ResourceTokenInput, members: MembershipPort): Promise<CreatedToken> {
    const accessLevel = input.access_level ?? DEFAULT_LEVEL;
    const messages: ValidationMessages = {};
    if (input.name.trim() === '') messages.name = ["can't be blank"];
    validateScopes(input.scopes, RESOURCE_TOKEN_SCOPES, messages);
    if (!LEVELS.includes(accessLevel)) messages.access_level = ['is not included in the list'];
    parseExpiry(input.expires_at, this.clock.now(), messages);
    if (Object.keys(messages).length > 0) throw new ValidationError(messages);
    if (accessLevel > resource.level) {
      throw new BadRequestError(`400 Bad request - Access level of the token can't be greater than the access level of its creator`);
    }
    const username = `${resource.kind}_${resource.id}_bot_${randomBytes(4).toString('hex')}`;
    return this.db.transaction().execute(async (trx) => {
      const bot = await this.users.create(
        { username, name: input.name, email: `${username}@noreply.basalt.invalid`, bot: true, skip_confirmation: true },
        trx,
      );
      await members.addTokenBot(
        actor,
        memberKind(resource.kind),
        resource.id,
        resource.level,
        { user_id: bot.id, access_level: accessLevel },
        resource.kind === 'project' ? resource.id : null,
        trx,
      );
      return this.tokens.create(bot.id, resource.kind, input, {
        createdById: actor.user.id,
        executor: trx,
        resource: { kind: memberKind(resource.kind), id: resource.id, accessLevel },
        audit: auditOf(actor, resource),
      });
    });
  }

  list(resource: ResourceRef, state: TokenState | undefined, limit: number, offset: number): Promise<{ rows: TokenRow[]; total: number }> {
    return this.tokens.list({ resource: { kind: memberKind(resource.kind), id: resource.id }, state }, limit, offset);
  }

  async get(resource: ResourceRef, tokenId: number): Promise<TokenRow> {
    const row = await this.tokens.findById(tokenId);
    if (!row || row.kind !== resource.kind || row.resource_id !== resource.id)
      throw new NotFoundError(`${label(resource.kind)} Access Token`);
    return row;
  }

  /**
   * Nobody acts on a token that holds more than they do: rotating hands over its secret, so a
   * Maintainer rotating an Owner-level token would become Owner. What the token holds is the
   * higher of its recorded level and its bot's membership (which an Owner may have changed).
   */
  private async checkHolds(resource: ResourceRef, row: TokenRow, members: MembershipPort): Promise<void> {
    const membership = await members.get(memberKind(resource.kind), resource.id, row.user_id).catch((error: unknown) => {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    });
    if (Math.max(row.access_level ?? 0, membership?.access_level ?? 0) > resource.level) throw new ForbiddenError();
  }

  /** Revokes the token and takes its bot out of the project or group. */
  async revoke(actor: Actor, resource: ResourceRef, row: TokenRow, members: MembershipPort): Promise<void> {
    await this.checkHolds(resource, row, members);
    // Revoking twice changes nothing; a rotated (revoked) token's bot still serves its successor.
    if (row.revoked === 1) return;
    await this.tokens.revoke(row, auditOf(actor, resource));
    await members
      .remove(
        { userId: actor.user.id, level: resource.level, ip: actor.ip },
        memberKind(resource.kind),
        resource.id,
        row.user_id,
        resource.kind === 'project' ? resource.id : null,
      )
      .catch((error: unknown) => {
        // A bot whose membership is already gone needs nothing more.
        if (!(error instanceof NotFoundError)) throw error;
      });
  }

  async rotate(
    resource: ResourceRef,
    row: TokenRow,
    expiresAt: string | null | undefined,
    members: MembershipPort,
    actor?: Actor,
  ): Promise<CreatedToken> {
    await this.checkHolds(resource, row, members);
    if (row.revoked === 1) throw new BadRequestError('400 Bad request - Token already revoked');
    return this.tokens.rotate(row, expiresAt, actor ? auditOf(actor, resource) : undefined);
  }
}
