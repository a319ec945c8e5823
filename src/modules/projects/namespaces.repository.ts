import type { Selectable, Updateable } from 'kysely';
import { type Executor, Repository, below, containing } from '../../infra/db/index.js';
import type { NamespacesTable } from '../../infra/db/tables/core.js';
import { memberNamespaceIds, type ListScope } from './scopes.repository.js';

export type NamespaceRow = Selectable<NamespacesTable>;

export interface NewNamespace {
  kind: 'user' | 'group';
  name: string;
  path: string;
  fullPath: string;
  parentId: number | null;
  ownerId: number | null;
  visibility: string;
  description: string;
  now: number;
}

/** Every prefix of a full path: `a/b/c` -> `a`, `a/b`, `a/b/c`. */
export function pathPrefixes(fullPath: string): string[] {
  const parts = fullPath.toLowerCase().split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

export interface GroupFilter {
  scope: ListScope;
  search?: string;
  topLevelOnly?: boolean;
  /** Only groups this user is a member of at `minAccess` or above: directly, or also below. */
  memberOf?: readonly { userId: number | null; minAccess: number; direct: boolean; now: number }[];
}

/** Groups the user is an unexpired direct member of at `minAccess` or above. */
function directMemberships(db: Executor, userId: number, now: number, minAccess: number) {
  return db
    .selectFrom('members as dm')
    .select('dm.source_id')
    .where('dm.user_id', '=', userId)
    .where('dm.source_kind', '=', 'namespace')
    .where('dm.access_level', '>=', minAccess)
    .where((eb) => eb.or([eb('dm.expires_at', 'is', null), eb('dm.expires_at', '>', now)]));
}

export class NamespacesRepository extends Repository {
  insert(ns: NewNamespace): Promise<NamespaceRow> {
    return this.db
      .insertInto('namespaces')
      .values({
        kind: ns.kind,
        name: ns.name,
        path: ns.path,
        full_path: ns.fullPath,
        full_path_lower: ns.fullPath.toLowerCase(),
        parent_id: ns.parentId,
        owner_id: ns.ownerId,
        visibility: ns.visibility,
        description: ns.description,
        created_at: ns.now,
        updated_at: ns.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findById(id: number): Promise<NamespaceRow | undefined> {
    return this.db.selectFrom('namespaces').selectAll().where('id', '=', id).where('pending_delete', '=', 0).executeTakeFirst();
  }

  findByIdIncludingDeleted(id: number): Promise<NamespaceRow | undefined> {
    return this.db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findByFullPath(fullPath: string): Promise<NamespaceRow | undefined> {
    return this.db
      .selectFrom('namespaces')
      .selectAll()
      .where('full_path_lower', '=', fullPath.toLowerCase())
      .where('pending_delete', '=', 0)
      .executeTakeFirst();
  }

  findPersonal(userId: number): Promise<NamespaceRow | undefined> {
    return this.db.selectFrom('namespaces').selectAll().where('kind', '=', 'user').where('owner_id', '=', userId).executeTakeFirst();
  }

  /** The namespace and its ancestors, root first. */
  async ancestry(fullPath: string): Promise<NamespaceRow[]> {
    const rows = await this.db.selectFrom('namespaces').selectAll().where('full_path_lower', 'in', pathPrefixes(fullPath)).execute();
    return rows.sort((a, b) => a.full_path.length - b.full_path.length);
  }

  /** Ids of the live namespaces at or below the groups a user is an unexpired member of. */
  async memberNamespaceIds(userId: number, now: number): Promise<number[]> {
    const rows = await memberNamespaceIds(this.db, userId, now).distinct().execute();
    return rows.map((r) => r.id);
  }

  descendants(fullPath: string): Promise<NamespaceRow[]> {
    return this.db.selectFrom('namespaces').selectAll().where('full_path_lower', 'like', below(fullPath)).orderBy('id').execute();
  }

  async listGroups(filter: GroupFilter & { parentId?: number | null }, limit: number, offset: number) {
    let query = this.db.selectFrom('namespaces').where('kind', '=', 'group').where('pending_delete', '=', 0);
    const { scope } = filter;
    if (!scope.unrestricted) {
      query = query.where((eb) =>
        eb.or([
          ...(scope.visibilities.length ? [eb('visibility', 'in', [...scope.visibilities])] : []),
          ...(scope.memberId !== null ? [eb('id', 'in', memberNamespaceIds(this.db, scope.memberId, scope.now))] : []),
          eb.lit(false),
        ]),
      );
    }
    if (filter.parentId !== undefined)
      query = filter.parentId === null ? query.where('parent_id', 'is', null) : query.where('parent_id', '=', filter.parentId);
    if (filter.topLevelOnly) query = query.where('parent_id', 'is', null);
    for (const { userId, minAccess, direct, now } of filter.memberOf ?? []) {
      query = query.where((eb) =>
        userId === null
          ? eb.lit(false)
          : direct
            ? eb('id', 'in', directMemberships(this.db, userId, now, minAccess))
            : eb('id', 'in', memberNamespaceIds(this.db, userId, now, minAccess)),
      );
    }
    if (filter.search) {
      const like = containing(filter.search.toLowerCase());
      query = query.where((eb) => eb.or([eb('full_path_lower', 'like', like), eb(eb.fn('lower', ['name']), 'like', like)]));
    }
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('name').orderBy('id').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  async update(id: number, changes: Updateable<NamespacesTable>): Promise<NamespaceRow | undefined> {
    return this.db.updateTable('namespaces').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('namespaces').where('id', '=', id).execute();
  }

  async addRedirect(oldPath: string, kind: 'namespace' | 'project', id: number, now: number): Promise<void> {
    await this.db.deleteFrom('redirect_routes').where('path_lower', '=', oldPath.toLowerCase()).execute();
    await this.db
      .insertInto('redirect_routes')
      .values({ path_lower: oldPath.toLowerCase(), source_kind: kind, source_id: id, created_at: now })
      .execute();
  }

  /** A path freed by a rename can be taken again: its redirect goes. */
  async dropRedirect(path: string): Promise<void> {
    await this.db.deleteFrom('redirect_routes').where('path_lower', '=', path.toLowerCase()).execute();
  }

  findRedirects(paths: readonly string[]) {
    if (paths.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('redirect_routes')
      .selectAll()
      .where(
        'path_lower',
        'in',
        paths.map((p) => p.toLowerCase()),
      )
      .execute();
  }
}
