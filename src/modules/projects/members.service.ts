import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { isUniqueViolation, type Database, type Executor } from '../../infra/db/index.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { AccessLevel, MEMBER_LEVELS } from './access.js';
import { MembersRepository, type MemberRow, type SourceKind } from './members.repository.js';

export interface MemberInput {
  user_id: number;
  access_level: number;
  expires_at?: string | null | undefined;
}

function parseExpiry(value: string | null | undefined): number | null {
  if (!value) return null;
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(ms)) throw ValidationError.field('expires_at', 'is invalid');
  return ms;
}

/** Memberships of groups (`namespace`) and projects, with the events they produce. */
export class MembersService {
  private readonly members: MembersRepository;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly bus: DomainEventBus,
  ) {
    this.members = new MembersRepository(db);
  }

  async add(
    actor: Actor,
    kind: SourceKind,
    sourceId: number,
    actorLevel: number,
    input: MemberInput,
    projectIdForEvents: number | null,
    executor?: Executor,
  ): Promise<MemberRow> {
    if (!(MEMBER_LEVELS as readonly number[]).includes(input.access_level))
      throw ValidationError.field('access_level', 'is not included in the list');
    // Nobody grants more than they hold (an owner may add owners).
    if (input.access_level > actorLevel) throw new ForbiddenError();
    const now = this.clock.now();
    const run = async (trx: Executor) => {
      const row = await this.members
        .withExecutor(trx)
        .insert(kind, sourceId, input.user_id, input.access_level, actor.user.id, parseExpiry(input.expires_at), now);
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
      // Other modules (bot users of access tokens) pass their transaction.
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
  ): Promise<MemberRow> {
    if (!(MEMBER_LEVELS as readonly number[]).includes(accessLevel))
      throw ValidationError.field('access_level', 'is not included in the list');
    if (accessLevel > actorLevel) throw new ForbiddenError();
    const row = await this.get(kind, sourceId, userId);
    if (
      row.access_level === AccessLevel.OWNER &&
      accessLevel < AccessLevel.OWNER &&
      kind === 'namespace' &&
      (await this.members.countOwners(kind, sourceId)) <= 1
    ) {
      throw new BadRequestError('400 Bad request - A group must have at least one owner');
    }
    return this.members.updateLevel(row.id, accessLevel, expiresAt === undefined ? undefined : parseExpiry(expiresAt), this.clock.now());
  }

  async remove(kind: SourceKind, sourceId: number, userId: number, projectIdForEvents: number | null): Promise<void> {
    const row = await this.get(kind, sourceId, userId);
    if (row.access_level === AccessLevel.OWNER && kind === 'namespace' && (await this.members.countOwners(kind, sourceId)) <= 1) {
      throw new BadRequestError('400 Bad request - A group must have at least one owner');
    }
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await this.members.withExecutor(trx).delete(row.id);
      await this.bus.publish(
        { type: 'member_left', projectId: projectIdForEvents, namespaceId: kind === 'namespace' ? sourceId : null, userId, at: now },
        trx,
      );
    });
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
