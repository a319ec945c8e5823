import { sql, type Selectable } from 'kysely';
import { Repository, containing } from '../../infra/db/index.js';
import type { ErrorStatus, ErrorTrackingErrorEventsTable, ErrorTrackingErrorsTable } from '../../infra/db/tables/error-tracking.js';

export type ErrorRow = Selectable<ErrorTrackingErrorsTable>;
export type ErrorEventRow = Selectable<ErrorTrackingErrorEventsTable>;
/** The `sort` values of the error list (`last_seen` is the default). */
export const ERROR_SORTS = ['last_seen', 'first_seen', 'frequency'] as const;
export type ErrorSort = (typeof ERROR_SORTS)[number];

export interface ErrorFilter {
  status?: ErrorStatus | undefined;
  search?: string | undefined;
  sort: ErrorSort;
}

const SORT_COLUMN = { last_seen: 'last_seen_at', first_seen: 'first_seen_at', frequency: 'events_count' } as const;

/** Errors and their events (Kysely only). */
export class ErrorsRepository extends Repository {
  async list(projectId: number, filter: ErrorFilter, limit: number, offset: number): Promise<{ rows: ErrorRow[]; total: number }> {
    let query = this.db.selectFrom('error_tracking_errors').where('project_id', '=', projectId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.search) {
      const pattern = containing(filter.search.toLowerCase());
      query = query.where((eb) =>
        eb.or(['title', 'culprit', 'description'].map((column) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern}`)),
      );
    }
    const total = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await query
      .selectAll()
      .orderBy(SORT_COLUMN[filter.sort], 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    return { rows, total: Number(total.n) };
  }

  find(projectId: number, errorId: number): Promise<ErrorRow | undefined> {
    return this.db
      .selectFrom('error_tracking_errors')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('id', '=', errorId)
      .executeTakeFirst();
  }

  /** The error an issue was opened from (`issue_iid`), if it was. */
  findByIssueIid(projectId: number, issueIid: number): Promise<ErrorRow | undefined> {
    return this.db
      .selectFrom('error_tracking_errors')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('issue_iid', '=', issueIid)
      .executeTakeFirst();
  }

  update(errorId: number, changes: Partial<Pick<ErrorRow, 'status' | 'issue_iid'>>, now: number): Promise<ErrorRow> {
    return this.db
      .updateTable('error_tracking_errors')
      .set({ ...changes, updated_at: now })
      .where('id', '=', errorId)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Distinct user identifiers per error (SPEC: users affected). */
  async userCounts(errorIds: readonly number[]): Promise<Map<number, number>> {
    if (errorIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('error_tracking_error_events')
      .select(['error_id', (eb) => eb.fn.count<number>('user_identifier').distinct().as('n')])
      .where('error_id', 'in', errorIds)
      .groupBy('error_id')
      .execute();
    return new Map(rows.map((r) => [r.error_id, Number(r.n)]));
  }

  async listEvents(errorId: number, limit: number, offset: number): Promise<{ rows: ErrorEventRow[]; total: number }> {
    const base = this.db.selectFrom('error_tracking_error_events').where('error_id', '=', errorId);
    const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await base.selectAll().orderBy('occurred_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
    return { rows, total: Number(total.n) };
  }

  latestEvent(errorId: number): Promise<ErrorEventRow | undefined> {
    return this.db
      .selectFrom('error_tracking_error_events')
      .selectAll()
      .where('error_id', '=', errorId)
      .orderBy('occurred_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** Events per hour since `from` (epoch ms of a whole hour), as {hour start: count}. */
  async hourlyCounts(errorId: number, from: number): Promise<Map<number, number>> {
    const hour = sql<number>`(occurred_at - (occurred_at % 3600000))`;
    const rows = await this.db
      .selectFrom('error_tracking_error_events')
      .select([hour.as('hour'), (eb) => eb.fn.countAll<number>().as('n')])
      .where('error_id', '=', errorId)
      .where('occurred_at', '>=', from)
      .groupBy(hour)
      .execute();
    return new Map(rows.map((r) => [Number(r.hour), Number(r.n)]));
  }

  /**
   * Session counts per release and environment since `from`, most recently active first: one
   * row per pair, so the list grows with releases and is paged like any other.
   */
  async releaseHealth(projectId: number, from: number, limit: number, offset: number) {
    const pairs = this.db
      .selectFrom('error_tracking_session_counts')
      .where('project_id', '=', projectId)
      .where('bucket_at', '>=', from)
      .groupBy(['release', 'environment']);
    const [rows, count] = await Promise.all([
      pairs
        .select((eb) => [
          'release',
          'environment',
          eb.fn.sum<number>('started').as('started'),
          eb.fn.sum<number>('exited').as('exited'),
          eb.fn.sum<number>('errored').as('errored'),
          eb.fn.sum<number>('crashed').as('crashed'),
          eb.fn.sum<number>('abnormal').as('abnormal'),
          eb.fn.max('bucket_at').as('last_bucket_at'),
        ])
        // Release then environment break ties, so pages never overlap.
        .orderBy('last_bucket_at', 'desc')
        .orderBy('release')
        .orderBy('environment')
        .limit(limit)
        .offset(offset)
        .execute(),
      this.db
        .selectFrom(pairs.select(['release', 'environment']).as('pairs'))
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }
}
