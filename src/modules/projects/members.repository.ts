import { sql, type Selectable } from 'kysely';
import { Repository } from '../../infra/db/index.js';
import type { MembersTable } from '../../infra/db/tables/core.js';

export type MemberRow = Selectable<MembersTable>;
export type SourceKind = 'namespace' | 'project';

const MEMBER_COLUMNS = [
  'id',
  'source_kind',
  'source_id',
  'user_id',
  'access_level',
  'created_by_id',
  'expires_at',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof MemberRow)[];

export class MembersRepository extends Repository {
  insert(
    kind: SourceKind,
    sourceId: number,
    userId: number,
    accessLevel: number,
    createdById: number | null,
    expiresAt: number | null,
    now: number,
  ): Promise<MemberRow> {
    return this.db
      .insertInto('members')
      .values({
        source_kind: kind,
        source_id: sourceId,
        user_id: userId,
        access_level: accessLevel,
        created_by_id: createdById,
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  find(kind: SourceKind, sourceId: number, userId: number): Promise<MemberRow | undefined> {
    return this.db
      .selectFrom('members')
      .selectAll()
      .where('source_kind', '=', kind)
      .where('source_id', '=', sourceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  }

  /** A user's memberships in any of these namespaces and this project (unexpired). */
  async levelsFor(userId: number, namespaceIds: readonly number[], projectId: number | null, now: number): Promise<MemberRow[]> {
    return this.db
      .selectFrom('members')
      .selectAll()
      .where('user_id', '=', userId)
      .where((eb) =>
        eb.or([
          ...(namespaceIds.length ? [eb.and([eb('source_kind', '=', 'namespace'), eb('source_id', 'in', namespaceIds)])] : []),
          ...(projectId !== null ? [eb.and([eb('source_kind', '=', 'project'), eb('source_id', '=', projectId)])] : []),
          eb('id', '=', -1),
        ]),
      )
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .execute();
  }

  listForUser(userId: number, now: number): Promise<MemberRow[]> {
    return this.db
      .selectFrom('members')
      .selectAll()
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .execute();
  }

  async list(kind: SourceKind, sourceIds: readonly number[], limit: number, offset: number): Promise<{ rows: MemberRow[]; total: number }> {
    if (sourceIds.length === 0) return { rows: [], total: 0 };
    const query = this.db.selectFrom('members').where('source_kind', '=', kind).where('source_id', 'in', sourceIds);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('id').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  listAllFor(kind: SourceKind, sourceIds: readonly number[]): Promise<MemberRow[]> {
    if (sourceIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('members')
      .selectAll()
      .where('source_kind', '=', kind)
      .where('source_id', 'in', sourceIds)
      .orderBy('id')
      .execute();
  }

  /**
   * A page of each user's highest membership among the direct source and the groups it
   * inherits from, ordered by user id, chosen in SQL so a request never loads every member.
   * Ties go to an inherited membership, then to the oldest row.
   */
  async listEffective(
    direct: { kind: SourceKind; id: number },
    inheritedFrom: readonly number[],
    limit: number,
    offset: number,
  ): Promise<{ rows: MemberRow[]; total: number }> {
    const candidates = this.db
      .selectFrom('members')
      .where((eb) =>
        eb.or([
          eb.and([eb('source_kind', '=', direct.kind), eb('source_id', '=', direct.id)]),
          ...(inheritedFrom.length ? [eb.and([eb('source_kind', '=', 'namespace'), eb('source_id', 'in', [...inheritedFrom])])] : []),
        ]),
      );
    const ranked = candidates
      .selectAll()
      .select(
        sql<number>`row_number() over (partition by user_id order by access_level desc, case when source_kind = 'project' then 1 else 0 end, id)`.as(
          'rank',
        ),
      );
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom(ranked.as('r'))
        .select(MEMBER_COLUMNS.map((c) => `r.${c}` as const))
        .where('r.rank', '=', 1)
        .orderBy('r.user_id')
        .limit(limit)
        .offset(offset)
        .execute(),
      candidates.select((eb) => eb.fn.count<number>('user_id').distinct().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  async updateLevel(id: number, accessLevel: number, expiresAt: number | null | undefined, now: number): Promise<MemberRow> {
    return this.db
      .updateTable('members')
      .set({ access_level: accessLevel, updated_at: now, ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}) })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('members').where('id', '=', id).execute();
  }

  async deleteForSource(kind: SourceKind, sourceId: number): Promise<void> {
    await this.db.deleteFrom('members').where('source_kind', '=', kind).where('source_id', '=', sourceId).execute();
  }

  /**
   * The names the audit trail copies in: the project's or group's full path, the member's
   * username and whether they are a bot, and the author's username.
   */
  async auditNames(kind: SourceKind, sourceId: number, userId: number, authorId: number) {
    const source =
      kind === 'project'
        ? await this.db.selectFrom('projects').select('full_path').where('id', '=', sourceId).executeTakeFirst()
        : await this.db.selectFrom('namespaces').select('full_path').where('id', '=', sourceId).executeTakeFirst();
    const people = await this.db.selectFrom('users').select(['id', 'username', 'bot']).where('id', 'in', [userId, authorId]).execute();
    const member = people.find((p) => p.id === userId);
    return {
      path: source?.full_path ?? null,
      member: member?.username ?? null,
      memberIsBot: member?.bot === 1,
      author: people.find((p) => p.id === authorId)?.username ?? '',
    };
  }

  async isBot(userId: number): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('bot').where('id', '=', userId).executeTakeFirst();
    return row?.bot === 1;
  }

  /** Up to `limit` owners of a group who can act: active, human, membership unexpired. */
  async actingOwnerIds(namespaceId: number, now: number, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.user_id')
      .select('members.user_id')
      .where('members.source_kind', '=', 'namespace')
      .where('members.source_id', '=', namespaceId)
      .where('members.access_level', '=', 50)
      .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', now)]))
      .where('users.state', '=', 'active')
      .where('users.bot', '=', 0)
      .orderBy('members.user_id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.user_id);
  }
}
