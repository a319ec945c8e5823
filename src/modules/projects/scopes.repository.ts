import { sql } from 'kysely';
import type { Executor } from '../../infra/db/index.js';

/**
 * What a caller may list, applied inside the listing statement as subqueries: binding ids of
 * visible groups or memberships would grow the statement with their number (SQLite refuses more
 * than 32,766 bound variables).
 */
export type ListScope =
  | { unrestricted: true }
  | {
      unrestricted: false;
      visibilities: readonly string[];
      /** The signed-in caller whose memberships open more; `null` when anonymous. */
      memberId: number | null;
      now: number;
    };

/**
 * Live namespaces at or below a group the user is an unexpired member of. "Below" compares
 * the path prefix with `substr`, which needs no LIKE escaping of `_` and `%` in paths.
 */
export function memberNamespaceIds(db: Executor, userId: number, now: number, minAccess = 0) {
  const query = db
    .selectFrom('members as m')
    .innerJoin('namespaces as g', 'g.id', 'm.source_id')
    .innerJoin('namespaces as n', (join) =>
      join.on((eb) =>
        eb.or([
          eb('n.id', '=', eb.ref('g.id')),
          eb(
            sql<string>`substr(${sql.ref('n.full_path_lower')}, 1, length(${sql.ref('g.full_path_lower')}) + 1)`,
            '=',
            sql<string>`${sql.ref('g.full_path_lower')} || '/'`,
          ),
        ]),
      ),
    )
    .select('n.id')
    .where('m.user_id', '=', userId)
    .where('m.source_kind', '=', 'namespace')
    .where((eb) => eb.or([eb('m.expires_at', 'is', null), eb('m.expires_at', '>', now)]))
    .where('g.pending_delete', '=', 0)
    .where('n.pending_delete', '=', 0);
  return minAccess > 0 ? query.where('m.access_level', '>=', minAccess) : query;
}

/** Projects the user is an unexpired direct member of. */
export function memberProjectIds(db: Executor, userId: number, now: number, minAccess = 0) {
  const query = db
    .selectFrom('members as pm')
    .select('pm.source_id')
    .where('pm.user_id', '=', userId)
    .where('pm.source_kind', '=', 'project')
    .where((eb) => eb.or([eb('pm.expires_at', 'is', null), eb('pm.expires_at', '>', now)]));
  return minAccess > 0 ? query.where('pm.access_level', '>=', minAccess) : query;
}

/** The user's personal namespace. */
export function personalNamespaceIds(db: Executor, userId: number) {
  return db.selectFrom('namespaces as pn').select('pn.id').where('pn.kind', '=', 'user').where('pn.owner_id', '=', userId);
}
