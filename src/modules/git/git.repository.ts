import type { Selectable } from 'kysely';
import { Repository } from '../../infra/db/index.js';
import type { GroupWikiRepositoriesTable, MoveContainerKind, MoveState, RepositoryStorageMovesTable } from '../../infra/db/tables/git.js';

export type MoveRow = Selectable<RepositoryStorageMovesTable>;
export type GroupWikiRow = Selectable<GroupWikiRepositoriesTable>;
export type { MoveContainerKind, MoveState };

/** Storage moves, group wiki repositories and pushes in flight (Kysely only). */
export class GitRepository extends Repository {
  insertMove(values: {
    kind: MoveContainerKind;
    containerId: number;
    state: MoveState;
    source: string;
    destination: string;
    now: number;
  }): Promise<MoveRow> {
    return this.db
      .insertInto('repository_storage_moves')
      .values({
        container_kind: values.kind,
        container_id: values.containerId,
        state: values.state,
        source_storage_name: values.source,
        destination_storage_name: values.destination,
        error_message: null,
        created_at: values.now,
        updated_at: values.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findMove(id: number): Promise<MoveRow | undefined> {
    return this.db.selectFrom('repository_storage_moves').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Storage moves per state, for `/-/metrics`. */
  async moveCountsByState(): Promise<Array<{ state: string; n: number }>> {
    const rows = await this.db
      .selectFrom('repository_storage_moves')
      .select(['state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy('state')
      .execute();
    return rows.map((row) => ({ state: row.state, n: Number(row.n) }));
  }

  async listMoves(kind: MoveContainerKind, containerId: number | null, limit: number, offset: number) {
    let query = this.db.selectFrom('repository_storage_moves').where('container_kind', '=', kind);
    if (containerId !== null) query = query.where('container_id', '=', containerId);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  /** Moves the state only from one of `from`; false when another worker got there first. */
  async transition(id: number, from: readonly MoveState[], to: MoveState, now: number, errorMessage?: string): Promise<boolean> {
    const result = await this.db
      .updateTable('repository_storage_moves')
      .set({ state: to, updated_at: now, ...(errorMessage !== undefined ? { error_message: errorMessage.slice(0, 256) } : {}) })
      .where('id', '=', id)
      .where('state', 'in', [...from])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  findGroupWiki(groupId: number): Promise<GroupWikiRow | undefined> {
    return this.db.selectFrom('group_wiki_repositories').selectAll().where('group_id', '=', groupId).executeTakeFirst();
  }

  async insertGroupWiki(groupId: number, storage: string, now: number): Promise<GroupWikiRow> {
    await this.db
      .insertInto('group_wiki_repositories')
      .values({ group_id: groupId, repository_storage: storage, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('group_id').doNothing())
      .execute();
    return this.db.selectFrom('group_wiki_repositories').selectAll().where('group_id', '=', groupId).executeTakeFirstOrThrow();
  }

  async updateGroupWiki(groupId: number, values: { repository_storage?: string; repository_read_only?: number }, now: number) {
    await this.db
      .updateTable('group_wiki_repositories')
      .set({ ...values, updated_at: now })
      .where('group_id', '=', groupId)
      .execute();
  }

  async deleteGroupWiki(groupId: number): Promise<void> {
    await this.db.deleteFrom('group_wiki_repositories').where('group_id', '=', groupId).execute();
  }

  listGroupWikisOn(storage: string, afterGroupId: number, limit: number): Promise<GroupWikiRow[]> {
    return this.db
      .selectFrom('group_wiki_repositories')
      .selectAll()
      .where('repository_storage', '=', storage)
      .where('group_id', '>', afterGroupId)
      .orderBy('group_id')
      .limit(limit)
      .execute();
  }

  async beginPush(kind: MoveContainerKind, containerId: number, now: number, expiresAt: number): Promise<number> {
    const row = await this.db
      .insertInto('git_active_pushes')
      .values({ container_kind: kind, container_id: containerId, created_at: now, expires_at: expiresAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  async endPush(id: number): Promise<void> {
    await this.db.deleteFrom('git_active_pushes').where('id', '=', id).execute();
  }

  async activePushes(kind: MoveContainerKind, containerId: number, now: number): Promise<number> {
    const row = await this.db
      .selectFrom('git_active_pushes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('container_kind', '=', kind)
      .where('container_id', '=', containerId)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
