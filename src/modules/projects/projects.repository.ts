import type { Selectable, Updateable } from 'kysely';
import { CompiledOnce, Repository, containing } from '../../infra/db/index.js';
import type { ProjectsTable } from '../../infra/db/tables/core.js';
import { memberNamespaceIds, memberProjectIds, personalNamespaceIds, type ListScope } from './scopes.repository.js';

export type ProjectRow = Selectable<ProjectsTable>;

export interface NewProject {
  namespaceId: number;
  name: string;
  path: string;
  fullPath: string;
  description: string;
  visibility: string;
  repositoryStorage: string;
  defaultBranch: string;
  creatorId: number | null;
  now: number;
}

/** Which projects a caller may see, as id lists (events and notifications read them). */
export interface ProjectScope {
  visibilities: string[];
  namespaceIds: number[];
  projectIds: number[];
  unrestricted: boolean;
}

export interface ProjectFilter {
  search?: string | undefined;
  visibility?: string | undefined;
  repositoryStorage?: string | undefined;
  namespaceIds?: number[] | undefined;
  /**
   * Only projects this user reaches through membership (`membership=true`: any level) or owns
   * (`owned=true`: their personal namespace or Owner access), each at `minAccess` or above;
   * `userId: null` (anonymous) has none.
   */
  memberOf?: readonly { userId: number | null; minAccess: number; now: number }[] | undefined;
  orderBy: 'id' | 'name' | 'path' | 'created_at' | 'updated_at' | 'last_activity_at';
  sort: 'asc' | 'desc';
}

// The hottest statements, compiled once (docs/perf-lab.md).
const PROJECT_BY_ID = new CompiledOnce<ProjectRow, [number]>(1, (db, id) =>
  db.selectFrom('projects').selectAll().where('id', '=', id).where('pending_delete', '=', 0),
);
const PROJECT_BY_PATH = new CompiledOnce<ProjectRow, [string]>(1, (db, path) =>
  db.selectFrom('projects').selectAll().where('full_path_lower', '=', path).where('pending_delete', '=', 0),
);
const NEXT_INTERNAL_ID = new CompiledOnce<{ last_value: number }, [number, string]>(2, (db, projectId, usage) =>
  db
    .insertInto('internal_ids')
    .values({ project_id: projectId, usage, last_value: 1 })
    .onConflict((oc) => oc.columns(['project_id', 'usage']).doUpdateSet((eb) => ({ last_value: eb('internal_ids.last_value', '+', 1) })))
    .returning('last_value'),
);

export class ProjectsRepository extends Repository {
  insert(p: NewProject): Promise<ProjectRow> {
    return this.db
      .insertInto('projects')
      .values({
        namespace_id: p.namespaceId,
        name: p.name,
        path: p.path,
        full_path: p.fullPath,
        full_path_lower: p.fullPath.toLowerCase(),
        description: p.description,
        visibility: p.visibility,
        repository_storage: p.repositoryStorage,
        default_branch: p.defaultBranch,
        creator_id: p.creatorId,
        last_activity_at: p.now,
        created_at: p.now,
        updated_at: p.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findById(id: number): Promise<ProjectRow | undefined> {
    return PROJECT_BY_ID.first(this.db, id);
  }

  findByIdIncludingDeleted(id: number): Promise<ProjectRow | undefined> {
    return this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByFullPath(fullPath: string): Promise<ProjectRow | undefined> {
    return PROJECT_BY_PATH.first(this.db, fullPath.toLowerCase());
  }

  async list(scope: ListScope, filter: ProjectFilter, limit: number, offset: number): Promise<{ rows: ProjectRow[]; total: number }> {
    let query = this.db.selectFrom('projects').where('pending_delete', '=', 0);
    if (!scope.unrestricted) {
      const { visibilities, memberId, now } = scope;
      query = query.where((eb) =>
        eb.or([
          ...(visibilities.length ? [eb('visibility', 'in', [...visibilities])] : []),
          ...(memberId !== null
            ? [
                eb('namespace_id', 'in', memberNamespaceIds(this.db, memberId, now)),
                eb('namespace_id', 'in', personalNamespaceIds(this.db, memberId)),
                eb('id', 'in', memberProjectIds(this.db, memberId, now)),
              ]
            : []),
          eb.lit(false),
        ]),
      );
    }
    if (filter.search) {
      const like = containing(filter.search.toLowerCase());
      query = query.where((eb) => eb.or([eb('full_path_lower', 'like', like), eb(eb.fn('lower', ['name']), 'like', like)]));
    }
    if (filter.visibility) query = query.where('visibility', '=', filter.visibility);
    if (filter.repositoryStorage) query = query.where('repository_storage', '=', filter.repositoryStorage);
    for (const { userId, minAccess, now } of filter.memberOf ?? []) {
      query = query.where((eb) =>
        userId === null
          ? eb.lit(false)
          : eb.or([
              eb('namespace_id', 'in', personalNamespaceIds(this.db, userId)),
              eb('namespace_id', 'in', memberNamespaceIds(this.db, userId, now, minAccess)),
              eb('id', 'in', memberProjectIds(this.db, userId, now, minAccess)),
            ]),
      );
    }
    if (filter.namespaceIds)
      query = filter.namespaceIds.length ? query.where('namespace_id', 'in', filter.namespaceIds) : query.where('id', '=', -1);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy(filter.orderBy, filter.sort).orderBy('id', filter.sort).limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  /** Ids of every project on a storage, pending deletion included, after `afterId` in id order. */
  async idsOnStorage(storage: string, afterId: number, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('projects')
      .select('id')
      .where('repository_storage', '=', storage)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  listInNamespaces(namespaceIds: readonly number[]): Promise<ProjectRow[]> {
    if (namespaceIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('projects').selectAll().where('namespace_id', 'in', namespaceIds).execute();
  }

  /**
   * Every change but an activity stamp bumps the `projects` cache epoch in the same executor
   * (projects.epochs.ts): lookups cached by other modules (collector grants, alert receivers) hold project rows.
   */
  async update(id: number, changes: Updateable<ProjectsTable>): Promise<ProjectRow | undefined> {
    return this.db.updateTable('projects').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('notes').where('project_id', '=', id).execute();
    await this.db.deleteFrom('members').where('source_kind', '=', 'project').where('source_id', '=', id).execute();
    await this.db.deleteFrom('projects').where('id', '=', id).execute();
  }

  /** Next per-project number (issues, alerts...) from one upsert, safe under concurrency. */
  async nextInternalId(projectId: number, usage: string): Promise<number> {
    const row = await NEXT_INTERNAL_ID.first(this.db, projectId, usage);
    if (!row) throw new Error('internal id upsert returned nothing');
    return Number(row.last_value);
  }
}
