import { SqliteAdapter, sql, type Insertable, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../infra/db/schema.js';
import { Repository } from '../../infra/db/index.js';
import type { EventsTable, PushEventPayloadsTable } from '../../infra/db/tables/notifications-events.js';
import { EXCLUDED_FROM_USER_LISTS } from './events.actions.js';

export type NewEvent = Insertable<EventsTable>;
export type NewPushPayload = Omit<PushEventPayloadsTable, 'event_id'>;

/** Filters already validated by the service; dates are epoch-ms bounds. */
export interface EventFilter {
  action?: number | undefined;
  targetType?: string | undefined;
  /** created_at < this */
  createdBefore?: number | undefined;
  /** created_at >= this */
  createdFrom?: number | undefined;
  sort: 'asc' | 'desc';
}

/** Whose events: one project's, one author's (in projects the caller may see), or several projects'. */
export type EventSource =
  | { kind: 'project'; projectId: number }
  | { kind: 'author'; authorId: number; scope: VisibleProjects }
  | { kind: 'projects'; scope: VisibleProjects };

/** Projects a caller may see (the projects module's ProjectScope). */
export interface VisibleProjects {
  unrestricted: boolean;
  visibilities: readonly string[];
  namespaceIds: readonly number[];
  projectIds: readonly number[];
}

/** Counting stops here: beyond it `X-Total` says "at least" (reference §2.3 MAX_COUNT_LIMIT). */
export const COUNT_LIMIT = 10_000;
/** Events `newest` reads by id before it falls back to the project index. */
const RECENT_WINDOW = 2_000;

type EventsQuery = SelectQueryBuilder<DB, 'events', object>;

export class EventsRepository extends Repository {
  async insert(event: NewEvent): Promise<number> {
    const row = await this.db.insertInto('events').values(event).returning('id').executeTakeFirstOrThrow();
    return row.id;
  }

  /** An event and its payload in the caller's transaction (reference §2.6). */
  async insertPush(event: NewEvent, payload: NewPushPayload): Promise<number> {
    const id = await this.insert(event);
    await this.db
      .insertInto('push_event_payloads')
      .values({ ...payload, event_id: id })
      .execute();
    return id;
  }

  /**
   * One page of event ids, newest (or oldest) id first, and the count capped at COUNT_LIMIT + 1.
   * Only `events` (and `projects` for visibility) are read here so the plan stays on the
   * (project_id, id), (author_id, id) and (…, created_at, id) indexes; details come after.
   */
  async page(source: EventSource, filter: EventFilter, limit: number, offset: number): Promise<{ ids: number[]; total: number }> {
    const base = this.filtered(source, filter);
    const [rows, count] = await Promise.all([
      base.select('events.id').orderBy('events.id', filter.sort).limit(limit).offset(offset).execute(),
      this.db
        .selectFrom(
          base
            .select(sql<number>`1`.as('one'))
            .limit(COUNT_LIMIT + 1)
            .as('capped'),
        )
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { ids: rows.map((r) => r.id), total: Number(count.n) };
  }

  /**
   * The newest `limit` event ids of a source, uncounted (the dashboard). Over many projects the
   * (project_id, id) index yields every event of every project to be sorted; the newest
   * RECENT_WINDOW events, read by id and filtered row by row, hold the same answer whenever
   * they hold `limit` matches (every later event is in the window); else the indexed query runs.
   * PostgreSQL's planner walks the primary key backwards by itself, and the window only slows it.
   */
  async newest(source: EventSource, limit: number): Promise<number[]> {
    const filter: EventFilter = { sort: 'desc' };
    if (this.db.getExecutor().adapter instanceof SqliteAdapter) {
      const recent = await this.filtered(source, filter, true)
        .where('events.id', '>', (eb) => eb.selectFrom('events').select(sql<number>`max(id) - ${RECENT_WINDOW}`.as('floor')))
        .select('events.id')
        .orderBy('events.id', 'desc')
        .limit(limit)
        .execute();
      if (recent.length === limit) return recent.map((r) => r.id);
    }
    const rows = await this.filtered(source, filter).select('events.id').orderBy('events.id', 'desc').limit(limit).execute();
    return rows.map((r) => r.id);
  }

  /**
   * Event rows with what presenting them needs. The events module is a read model over the
   * core: it joins the target's row (issue, note, snippet) read-only instead of asking for
   * each one (docs/decisions.md "Events").
   */
  details(ids: readonly number[]) {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('events as e')
      .leftJoin('push_event_payloads as pp', 'pp.event_id', 'e.id')
      .leftJoin('issues as i', (join) => join.onRef('i.id', '=', 'e.target_id').on('e.target_type', '=', 'Issue'))
      .leftJoin('notes as n', (join) => join.onRef('n.id', '=', 'e.target_id').on('e.target_type', '=', 'Note'))
      .leftJoin('issues as ni', (join) => join.onRef('ni.id', '=', 'n.noteable_id').on('n.noteable_type', '=', 'Issue'))
      .leftJoin('snippets as s', (join) => join.onRef('s.id', '=', 'e.target_id').on('e.target_type', '=', 'Snippet'))
      .leftJoin('snippets as ns', (join) => join.onRef('ns.id', '=', 'n.noteable_id').on('n.noteable_type', '=', 'Snippet'))
      .where('e.id', 'in', ids)
      .select([
        'e.id',
        'e.project_id',
        'e.author_id',
        'e.action',
        'e.target_type',
        'e.target_id',
        'e.imported_from',
        'e.created_at',
        'pp.commit_count',
        'pp.action as push_action',
        'pp.ref_type',
        'pp.commit_from',
        'pp.commit_to',
        'pp.ref',
        'pp.commit_title',
        'pp.ref_count',
        'i.iid as issue_iid',
        'i.title as issue_title',
        'i.confidential as issue_confidential',
        'i.author_id as issue_author_id',
        'n.id as note_id',
        'n.body as note_body',
        'n.author_id as note_author_id',
        'n.system as note_system',
        'n.noteable_type',
        'n.noteable_id',
        'n.project_id as note_project_id',
        'n.created_at as note_created_at',
        'n.updated_at as note_updated_at',
        'ni.iid as noteable_iid',
        'ni.confidential as noteable_confidential',
        'ni.author_id as noteable_author_id',
        's.title as snippet_title',
        's.visibility as snippet_visibility',
        's.author_id as snippet_author_id',
        'ns.visibility as noteable_snippet_visibility',
        'ns.author_id as noteable_snippet_author_id',
      ])
      .execute();
  }

  /** `byRow`: the project filter is applied to each row read, its index left unused (`newest`). */
  private filtered(source: EventSource, filter: EventFilter, byRow = false): EventsQuery {
    let query: EventsQuery = this.db.selectFrom('events');
    if (source.kind === 'project') {
      query = query.where('events.project_id', '=', source.projectId);
    } else {
      if (source.kind === 'author') query = query.where('events.author_id', '=', source.authorId);
      else
        query = query.where(
          byRow ? sql<number>`+${sql.ref('events.project_id')}` : sql.ref<number>('events.project_id'),
          'in',
          this.visibleProjectIds(source.scope, false),
        );
      // Events outside projects (epics, personal namespaces) are never listed (reference §2.3 step 3).
      if (source.kind === 'author') query = query.where('events.project_id', 'in', this.visibleProjectIds(source.scope, true));
      query = query.where((eb) =>
        eb.or([eb('events.target_type', 'is', null), eb('events.target_type', 'not in', [...EXCLUDED_FROM_USER_LISTS])]),
      );
    }
    if (filter.action !== undefined) query = query.where('events.action', '=', filter.action);
    if (filter.targetType !== undefined) query = query.where('events.target_type', '=', filter.targetType);
    if (filter.createdBefore !== undefined) query = query.where('events.created_at', '<', filter.createdBefore);
    if (filter.createdFrom !== undefined) query = query.where('events.created_at', '>=', filter.createdFrom);
    return query;
  }

  /** Ids of live projects in the scope; `withPublic` adds what the scope's visibilities open. */
  private visibleProjectIds(scope: VisibleProjects, withPublic: boolean) {
    return this.db
      .selectFrom('projects')
      .select('projects.id')
      .where('projects.pending_delete', '=', 0)
      .where((eb) => {
        if (scope.unrestricted) return eb.lit(true);
        const visibilities = withPublic ? scope.visibilities : [];
        return eb.or([
          ...(visibilities.length ? [eb('projects.visibility', 'in', [...visibilities])] : []),
          ...(scope.namespaceIds.length ? [eb('projects.namespace_id', 'in', [...scope.namespaceIds])] : []),
          ...(scope.projectIds.length ? [eb('projects.id', 'in', [...scope.projectIds])] : []),
          eb.lit(false),
        ]);
      });
  }
}
