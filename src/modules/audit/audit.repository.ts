import type { Insertable, Selectable } from 'kysely';
import { CompiledOnce, Repository, type Executor } from '../../infra/db/index.js';
import type { AuditEventsTable } from '../../infra/db/tables/audit.js';
import type { AuditEntry } from '../../infra/audit.js';

export type AuditEventRow = Selectable<AuditEventsTable>;

/**
 * Each column of `audit_events` an event fills, with the entry's value for it (`details` still the
 * object): the one place their order is written; row values and the queue's text follow it.
 */
const COLUMN_VALUES = [
  ['author_id', (e) => e.authorId],
  ['author_name', (e) => e.authorName],
  ['entity_type', (e) => e.entityType],
  ['entity_id', (e) => e.entityId],
  ['entity_path', (e) => e.entityPath],
  ['target_type', (e) => e.targetType],
  ['target_id', (e) => e.targetId],
  ['target_details', (e) => e.targetDetails],
  ['event_name', (e) => e.eventName],
  ['details', (e) => e.details],
  ['ip_address', (e) => e.ipAddress],
  ['created_at', (e) => e.at],
] as const satisfies readonly (readonly [keyof AuditEventsTable, (entry: AuditEntry) => unknown])[];
const COLUMNS = COLUMN_VALUES.map(([column]) => column);
/** How many values an event's row has. */
export const COLUMN_COUNT = COLUMN_VALUES.length;
// Token creation and sign-in write one each: compiled once, run on SQLite's connection directly.
const INSERT = new CompiledOnce<unknown, AuditRowValues>(COLUMN_COUNT, (db, ...values: unknown[]) =>
  db.insertInto('audit_events').values(Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as Insertable<AuditEventsTable>),
);

/** Rows of one INSERT when the writer empties the queue: 12 values each, far below either database's limit. */
const ROWS_PER_INSERT = 200;

/**
 * An event's row values, in COLUMNS' order. `Details` is its `details`: the entry's object as
 * the queue decodes it (src/modules/audit/audit-queue.repository.ts), its JSON in the table.
 */
type RowValues<Details> = [
  number,
  string,
  string,
  number,
  string | null,
  string | null,
  number | null,
  string | null,
  string,
  Details,
  string | null,
  number,
];
export type AuditRowValues = RowValues<string>;
export type QueuedRowValues = RowValues<unknown>;
const DETAILS = COLUMNS.indexOf('details');

/** The value of `entry` in the column at `column` of COLUMNS, `details` still the object. */
export const entryValue = (entry: AuditEntry, column: number): unknown =>
  (COLUMN_VALUES[column] as (typeof COLUMN_VALUES)[number])[1](entry);

/** The row values of `entry`, `details` still the object. */
function queuedValuesOf(entry: AuditEntry): QueuedRowValues {
  return COLUMN_VALUES.map(([, value]) => value(entry)) as unknown as QueuedRowValues;
}

/** Row values as the table holds them: `details` as JSON (names, scopes and ids: small). */
export function withDetailsJson(values: QueuedRowValues): AuditRowValues {
  if (typeof values[DETAILS] !== 'string') values[DETAILS] = JSON.stringify(values[DETAILS] ?? {});
  return values as AuditRowValues;
}

/** The row values of `entry` for the table. */
export const rowValuesOf = (entry: AuditEntry): AuditRowValues => withDetailsJson(queuedValuesOf(entry));

export interface AuditFilter {
  createdAfter?: number;
  createdBefore?: number;
  entityType?: string;
  entityId?: number;
}

/** The `audit_events` table: written by the bus subscriber and the queue's writer, read by the three lists, trimmed by retention. */
export class AuditRepository extends Repository {
  async insert(entry: AuditEntry): Promise<void> {
    await INSERT.rows(this.db, ...rowValuesOf(entry));
  }

  /**
   * Writes events from their row values (the queue's). On SQLite each row is the one compiled
   * INSERT run on the connection (a few microseconds); elsewhere a bounded number of rows per
   * statement.
   */
  async insertMany(rows: readonly AuditRowValues[]): Promise<void> {
    const first = rows[0];
    if (first === undefined) return;
    if (INSERT.runNow(this.db, ...first)) {
      for (let i = 1; i < rows.length; i += 1) INSERT.runNow(this.db, ...(rows[i] as AuditRowValues));
      return;
    }
    for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
      const chunk = rows.slice(at, at + ROWS_PER_INSERT);
      await this.db
        .insertInto('audit_events')
        .values(chunk.map((values) => Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as Insertable<AuditEventsTable>))
        .execute();
    }
  }

  /**
   * The entry written at once on SQLite's connection, inside `executor`'s transaction: true, or
   * false when the caller must `await on(executor).insert(entry)` (PostgreSQL). No repository, no
   * promise: the write of a token creation or a sign-in (docs/performance.md "Audit").
   */
  static insertNow(executor: Executor, entry: AuditEntry): boolean {
    return INSERT.runNow(executor, ...rowValuesOf(entry));
  }

  private filtered(filter: AuditFilter) {
    let query = this.db.selectFrom('audit_events');
    if (filter.entityType !== undefined) query = query.where('entity_type', '=', filter.entityType);
    if (filter.entityId !== undefined) query = query.where('entity_id', '=', filter.entityId);
    if (filter.createdAfter !== undefined) query = query.where('created_at', '>=', filter.createdAfter);
    if (filter.createdBefore !== undefined) query = query.where('created_at', '<=', filter.createdBefore);
    return query;
  }

  /** A page, newest first, and how many match. */
  async list(filter: AuditFilter, limit: number, offset: number): Promise<{ rows: AuditEventRow[]; total: number }> {
    const rows = await this.filtered(filter)
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const counted = await this.filtered(filter)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return { rows, total: Number(counted.n) };
  }

  findById(id: number): Promise<AuditEventRow | undefined> {
    return this.db.selectFrom('audit_events').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Deletes up to `batch` events older than `cutoff`; how many went. */
  async deleteOlderThan(cutoff: number, batch: number): Promise<number> {
    const deleted = await this.db
      .deleteFrom('audit_events')
      .where('id', 'in', (eb) =>
        eb.selectFrom('audit_events').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(batch),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}
