import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { CompiledOnce, Repository, containing } from '../../infra/db/index.js';
import { ALERT_STATUSES, type AlertStatus } from '../../infra/db/tables/alerts.js';
import type { AlertSettingsTable, AlertsTable } from '../../infra/db/tables/alerts.js';
import { SEVERITIES } from './normalize-common.rules.js';

/**
 * The predicate of the partial unique index `alerts_open_fingerprint`, as a literal: the
 * planner uses a partial index only when the query states its predicate word for word; a
 * bound parameter (`status <> ?`) makes SQLite scan the project's alerts instead.
 */
const OPEN = sql.raw<boolean>(`status <> 'resolved'`);

export type AlertRow = Selectable<AlertsTable>;
export { ALERT_STATUSES, type AlertStatus };
export type AlertSettingsRow = Selectable<AlertSettingsTable>;
export type NewAlertRow = Insertable<AlertsTable>;

/**
 * Reference A7: severity order, most critical first; status order, triggered first. The rank is
 * the value's position in its list; a value outside the list ranks with the last one.
 */
function rankOf(column: string, values: readonly string[]) {
  const cases = values.slice(0, -1).map((value, rank) => `when '${value}' then ${rank}`);
  return sql.raw<number>(`case ${column} ${cases.join(' ')} else ${values.length - 1} end`);
}
const SEVERITY_RANK = rankOf('severity', SEVERITIES);
const STATUS_RANK = rankOf('status', ALERT_STATUSES);

/** The `sort` values of the alert list (reference A7). */
export const ALERT_SORTS = [
  'created_at_asc',
  'created_at_desc',
  'updated_at_asc',
  'updated_at_desc',
  'started_at_asc',
  'started_at_desc',
  'ended_at_asc',
  'ended_at_desc',
  'event_count_asc',
  'event_count_desc',
  'severity_asc',
  'severity_desc',
  'status_asc',
  'status_desc',
] as const;
export type AlertSort = (typeof ALERT_SORTS)[number];

export interface AlertFilter {
  statuses?: AlertStatus[] | undefined;
  severities?: string[] | undefined;
  search?: string | undefined;
  sort: AlertSort;
}

// Run for every incoming alert: compiled once (docs/perf-lab.md).
const SETTINGS = new CompiledOnce(1, (db, projectId: number) =>
  db.selectFrom('alert_settings').selectAll().where('project_id', '=', projectId),
);
// A new fingerprint is the common case of a miss: a read of the partial index settles it
// (an UPDATE that finds nothing costs about three times as much on SQLite).
const OPEN_ID = new CompiledOnce(2, (db, projectId: number, fingerprint: string) =>
  db.selectFrom('alerts').select('id').where('project_id', '=', projectId).where('fingerprint', '=', fingerprint).where(OPEN),
);
const INCREMENT_OPEN = new CompiledOnce(2, (db, now: number, id: number) =>
  db
    .updateTable('alerts')
    .set((eb) => ({ events: eb('events', '+', 1), updated_at: now }))
    .where('id', '=', id)
    // Resolved since it was read: the caller creates a new alert instead.
    .where(OPEN)
    // A repeat answers with the alert's iid and title only: the rest (payload included) is
    // not read back.
    .returning(['iid', 'title']),
);

/** The columns a new alert is written with, in the order INSERT_OR_INCREMENT takes them. */
const NEW_ALERT_COLUMNS = [
  'project_id',
  'iid',
  'integration_id',
  'title',
  'description',
  'service',
  'monitoring_tool',
  'hosts',
  'severity',
  'status',
  'started_at',
  'ended_at',
  'events',
  'fingerprint',
  'environment_name',
  'runbook',
  'full_query',
  'y_label',
  'incident_markdown',
  'payload',
  'custom_fields',
  'issue_id',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof NewAlertRow)[];

/**
 * A new alert; when another request created the same unresolved fingerprint in the
 * meantime, the partial unique index turns this into an increment of that alert.
 */
const INSERT_OR_INCREMENT = new CompiledOnce(NEW_ALERT_COLUMNS.length, (db, ...values: unknown[]) =>
  db
    .insertInto('alerts')
    .values(Object.fromEntries(NEW_ALERT_COLUMNS.map((column, i) => [column, values[i]])) as NewAlertRow)
    .onConflict((oc) =>
      oc
        .columns(['project_id', 'fingerprint'])
        .where(OPEN)
        .doUpdateSet((eb) => ({ events: eb('alerts.events', '+', 1), updated_at: eb.ref('excluded.updated_at') })),
    )
    // Not the whole row: a new one is what was just written, and reading 25 columns back
    // (the payload among them) costs more than the insert's own work on an index.
    .returning(['id', 'iid', 'title']),
);

export class AlertsRepository extends Repository {
  /** A repeat of an unresolved alert: one more event, nothing else changes (reference A6 step 2). */
  async incrementOpen(projectId: number, fingerprint: string, now: number): Promise<Pick<AlertRow, 'iid' | 'title'> | undefined> {
    const open = await OPEN_ID.first(this.db, projectId, fingerprint);
    return open ? INCREMENT_OPEN.first(this.db, now, open.id) : undefined;
  }

  /**
   * Inserts a new alert; when another request created the same unresolved fingerprint in
   * the meantime, the partial unique index turns this into an increment of that alert.
   */
  async insertOrIncrement(row: NewAlertRow): Promise<Pick<AlertRow, 'id' | 'iid' | 'title'>> {
    const inserted = await INSERT_OR_INCREMENT.first(this.db, ...NEW_ALERT_COLUMNS.map((column) => row[column] ?? null));
    if (!inserted) throw new Error('the alert insert returned no row');
    return inserted;
  }

  insert(row: NewAlertRow): Promise<AlertRow> {
    return this.db.insertInto('alerts').values(row).returningAll().executeTakeFirstOrThrow();
  }

  /** Resolves the unresolved alert with this fingerprint (reference A6 step 2). */
  resolveOpen(projectId: number, fingerprint: string, endedAt: number, now: number): Promise<AlertRow | undefined> {
    return this.db
      .updateTable('alerts')
      .set({ status: 'resolved', ended_at: endedAt, updated_at: now })
      .where('project_id', '=', projectId)
      .where('fingerprint', '=', fingerprint)
      .where(OPEN)
      .returningAll()
      .executeTakeFirst();
  }

  update(id: number, changes: Updateable<AlertsTable>): Promise<AlertRow | undefined> {
    return this.db.updateTable('alerts').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** The alert whose incident is this issue. */
  findByIssueId(projectId: number, issueId: number): Promise<AlertRow | undefined> {
    return this.db.selectFrom('alerts').selectAll().where('project_id', '=', projectId).where('issue_id', '=', issueId).executeTakeFirst();
  }

  findByIid(projectId: number, iid: number): Promise<AlertRow | undefined> {
    return this.db.selectFrom('alerts').selectAll().where('project_id', '=', projectId).where('iid', '=', iid).executeTakeFirst();
  }

  /** A page of alerts and how many match (the API's list and its pagination headers). */
  async list(projectId: number, filter: AlertFilter, limit: number, offset: number): Promise<{ rows: AlertRow[]; total: number }> {
    const count = await this.matching(projectId, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const rows = await this.filtered(projectId, filter).limit(limit).offset(offset).execute();
    return { rows, total: Number(count.n) };
  }

  private matching(projectId: number, filter: AlertFilter) {
    let query = this.db.selectFrom('alerts').where('project_id', '=', projectId);
    if (filter.statuses?.length) query = query.where('status', 'in', filter.statuses);
    if (filter.severities?.length) query = query.where('severity', 'in', filter.severities);
    if (filter.search) {
      const like = containing(filter.search.toLowerCase());
      query = query.where((eb) =>
        eb.or(['title', 'description', 'service', 'monitoring_tool'].map((column) => eb(sql`lower(${sql.ref(column)})`, 'like', like))),
      );
    }
    return query;
  }

  /** The filter's alerts in its order (an index walk for the default order: migration 0015). */
  private filtered(projectId: number, filter: AlertFilter) {
    const [key, direction] = splitSort(filter.sort);
    return this.matching(projectId, filter)
      .selectAll()
      .orderBy(key === 'severity' ? SEVERITY_RANK : key === 'status' ? STATUS_RANK : sql.ref(key), direction)
      .orderBy('id', direction);
  }

  /**
   * How many alerts the project has in each status, each counted up to `cap + 1` (a count above
   * `cap` means "more than cap"): one statement of per-status counts, each stopping after `cap + 1`
   * entries of `alerts_project_status`, so 100,000 alerts cost as much as a thousand.
   */
  async statusCountsUpTo(projectId: number, cap: number): Promise<Record<string, number>> {
    const parts = ALERT_STATUSES.map(
      (status) =>
        sql`select ${sql.lit(status)} as status, count(*) as n from (select 1 as one from alerts where project_id = ${projectId} and status = ${sql.lit(status)} limit ${cap + 1}) as capped`,
    );
    const { rows } = await sql<{ status: string; n: number | string }>`${sql.join(parts, sql` union all `)}`.execute(this.db);
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  }

  /** One page of the alerts a filter selects, without counting them (the list page asks for one row more). */
  page(projectId: number, filter: AlertFilter, limit: number, offset: number): Promise<AlertRow[]> {
    return this.filtered(projectId, filter).limit(limit).offset(offset).execute();
  }

  findSettings(projectId: number): Promise<AlertSettingsRow | undefined> {
    return SETTINGS.first(this.db, projectId);
  }

  /** Bumps the `alerts` cache epoch (alerts.epochs.ts): receiver targets carry the settings (targets.service.ts). */
  async upsertSettings(row: AlertSettingsRow): Promise<AlertSettingsRow> {
    const saved = await this.db
      .insertInto('alert_settings')
      .values(row)
      .onConflict((oc) =>
        oc.column('project_id').doUpdateSet({
          create_issue: row.create_issue,
          auto_close_incident: row.auto_close_incident,
          send_email: row.send_email,
          updated_at: row.updated_at,
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return saved;
  }
}

/** `severity_asc` lists least critical first (reference A7), hence the reversed rank. */
function splitSort(sort: AlertSort): [string, 'asc' | 'desc'] {
  const direction = sort.endsWith('_asc') ? 'asc' : 'desc';
  const key = sort.replace(/_(asc|desc)$/, '');
  const column = key === 'event_count' ? 'events' : key;
  if (column === 'severity' || column === 'status') return [column, direction === 'asc' ? 'desc' : 'asc'];
  return [column, direction];
}
