import type { Actor } from '../../infra/auth/index.js';
import { auditEntry, withSudo, type AuditEntry } from '../../infra/audit.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { isUniqueViolation, type Database, type Executor } from '../../infra/db/index.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { AccessLevel, MEMBER_LEVELS } from './access.policy.js';
import type { MembersRepository, MemberRow, SourceKind } from './members.repository.js';

export interface MemberInput {
  user_id: number;
  access_level: number;
  expires_at?: string | null | undefined;
}

/** A membership ends at the start of its `expires_at` day (UTC), so that day must still be ahead. */
function parseExpiry(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(ms)) throw ValidationError.field('expires_at', 'is invalid');
  if (ms <= now) throw ValidationError.field('expires_at', 'must be in the future');
  return ms;
}

/** A member's level must be one of MEMBER_LEVELS, and nobody grants more than they hold (an owner may add owners). */
function checkGrantable(accessLevel: number, actorLevel: number): void {
  if (!(MEMBER_LEVELS as readonly number[]).includes(accessLevel))
    throw ValidationError.field('access_level', 'is not included in the list');
  if (accessLevel > actorLevel) throw new ForbiddenError();
}

/** Who acts on a membership: their user id, and their effective level where it is (admins: Owner). */
export interface MemberActor {
  readonly userId: number;
  readonly level: number;
  /** The request's client address, for the audit trail. */
  readonly ip?: string | undefined;
}

const LAST_OWNER = '400 Bad request - A group must have at least one owner';
const LEVEL_NAMES: Record<number, string> = { 10: 'Guest', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };
const levelName = (level: number) => LEVEL_NAMES[level] ?? String(level);

/** Memberships of groups (`namespace`) and projects, with the events they produce. */
export class MembersService {
  constructor(
    private readonly db: Database,
    private readonly members: MembersRepository,
    private readonly clock: Clock,
    private readonly bus: DomainEventBus,
  ) {}

  /**
   * A person joins. A token's bot is refused: it joins only with its token (`addTokenBot`), since
   * whoever may rotate the token on its own project or group would also hold what it got here
   * (the established product refuses this too).
   */
  async add(
    actor: Actor,
    kind: SourceKind,
    sourceId: number,
    actorLevel: number,
    input: MemberInput,
    projectIdForEvents: number | null,
  ): Promise<MemberRow> {
    if (await this.members.isBot(input.user_id))
      throw ValidationError.field('user_id', 'project bots cannot be added to other groups / projects');
    return this.join(actor, kind, sourceId, actorLevel, input, projectIdForEvents);
  }

  /** The membership of a new project or group access token's bot, in the token's transaction. */
  addTokenBot(
    actor: Actor,
    kind: SourceKind,
    sourceId: number,
    actorLevel: number,
    input: MemberInput,
    projectIdForEvents: number | null,
    executor: Executor,
  ): Promise<MemberRow> {
    return this.join(actor, kind, sourceId, actorLevel, input, projectIdForEvents, executor);
  }

  private async join(
    actor: Actor,
    kind: SourceKind,
    sourceId: number,
    actorLevel: number,
    input: MemberInput,
    projectIdForEvents: number | null,
    executor?: Executor,
  ): Promise<MemberRow> {
    checkGrantable(input.access_level, actorLevel);
    const now = this.clock.now();
    const expiresAt = parseExpiry(input.expires_at, now);
    const run = async (trx: Executor) => {
      const row = await this.members.on(trx).insert(kind, sourceId, input.user_id, input.access_level, actor.user.id, expiresAt, now);
      // A token's bot joins with its token, whose creation is the audited action.
      if (!executor) {
        await this.audit(
          trx,
          actor.user.id,
          kind,
          sourceId,
          input.user_id,
          'member_created',
          now,
          withSudo({ add: 'user_access', as: levelName(input.access_level) }, actor),
          actor.ip,
        );
      }
      await this.bus.publish(
        {
          type: 'member_joined',
          projectId: projectIdForEvents,
          namespaceId: kind === 'namespace' ? sourceId : null,
          userId: input.user_id,
          at: now,
        },
        trx,
      );
      return row;
    };
    try {
      // A token's bot joins in the transaction that makes the token.
      return await (executor ? run(executor) : this.db.transaction().execute(run));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('Member already exists');
      throw error;
    }
  }

  async get(kind: SourceKind, sourceId: number, userId: number): Promise<MemberRow> {
    const row = await this.members.find(kind, sourceId, userId);
    if (!row) throw new NotFoundError('Member');
    return row;
  }

  async update(
    kind: SourceKind,
    sourceId: number,
    userId: number,
    actorLevel: number,
    accessLevel: number,
    expiresAt?: string | null,
    actor?: Actor,
  ): Promise<MemberRow> {
    checkGrantable(accessLevel, actorLevel);
    const now = this.clock.now();
    const expiry = expiresAt === undefined ? undefined : parseExpiry(expiresAt, now);
    const row = await this.get(kind, sourceId, userId);
    // Nor does anyone change someone who holds more (up or down).
    if (row.access_level > actorLevel) throw new ForbiddenError();
    if (accessLevel < AccessLevel.OWNER && (await this.isLastOwner(row))) throw new BadRequestError(LAST_OWNER);
    return this.db.transaction().execute(async (trx) => {
      const updated = await this.members.on(trx).updateLevel(row.id, accessLevel, expiry, now);
      await this.audit(
        trx,
        actor?.user.id ?? -1,
        kind,
        sourceId,
        userId,
        'member_updated',
        now,
        withSudo({ change: 'access_level', from: levelName(row.access_level), to: levelName(accessLevel) }, actor),
        actor?.ip,
      );
      return updated;
    });
  }

  /** Publishes a membership change for the audit trail, about the project or group, naming the member. */
  private async audit(
    trx: Executor,
    authorId: number,
    kind: SourceKind,
    sourceId: number,
    userId: number,
    eventName: string,
    at: number,
    details: AuditEntry['details'],
    ip: string | undefined,
  ): Promise<void> {
    const names = await this.members.on(trx).auditNames(kind, sourceId, userId, authorId);
    // A token's bot leaves with its token, whose revocation is the audited action.
    if (names.memberIsBot && eventName === 'member_destroyed') return;
    const author = { authorId, authorName: authorId === -1 ? 'system' : names.author, ipAddress: ip ?? null };
    const entry = auditEntry(author, {
      entityType: kind === 'project' ? 'Project' : 'Group',
      entityId: sourceId,
      entityPath: names.path,
      targetType: 'User',
      targetId: userId,
      targetDetails: names.member,
      eventName,
      details,
      at,
    });
    await this.bus.publish({ type: 'audited', at, entry }, trx);
  }

  /** Anyone may leave; removing someone else needs at least the level they hold. */
  async remove(actor: MemberActor, kind: SourceKind, sourceId: number, userId: number, projectIdForEvents: number | null): Promise<void> {
    const row = await this.get(kind, sourceId, userId);
    if (userId !== actor.userId && row.access_level > actor.level) throw new ForbiddenError();
    if (await this.isLastOwner(row)) throw new BadRequestError(LAST_OWNER);
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await this.members.on(trx).delete(row.id);
      await this.audit(trx, actor.userId, kind, sourceId, userId, 'member_destroyed', now, { remove: 'user_access' }, actor.ip);
      await this.bus.publish(
        { type: 'member_left', projectId: projectIdForEvents, namespaceId: kind === 'namespace' ? sourceId : null, userId, at: now },
        trx,
      );
    });
  }

  /**
   * Whether this membership is the group's only owner that can act: active (not blocked),
   * unexpired and human. A blocked, expired or bot owner keeps no group in hand, so it does
   * not count, and taking one away is never refused. Projects have no such rule: their owner
   * is their namespace (the personal namespace's user, or the group's owners).
   */
  private async isLastOwner(row: MemberRow): Promise<boolean> {
    if (row.source_kind !== 'namespace' || row.access_level !== AccessLevel.OWNER) return false;
    const owners = await this.members.actingOwnerIds(row.source_id, this.clock.now(), 2);
    return owners.length === 1 && owners[0] === row.user_id;
  }

  list(kind: SourceKind, sourceIds: readonly number[], limit: number, offset: number) {
    return this.members.list(kind, sourceIds, limit, offset);
  }

  /** A page of `/members/all`: each user once, at their highest level. */
  listEffective(direct: { kind: SourceKind; id: number }, inheritedFrom: readonly number[], limit: number, offset: number) {
    return this.members.listEffective(direct, inheritedFrom, limit, offset);
  }

  listAll(kind: SourceKind, sourceIds: readonly number[]) {
    return this.members.listAllFor(kind, sourceIds);
  }
}
