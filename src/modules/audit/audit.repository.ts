import type { Insertable, Selectable } from 'kysely';
import { CompiledOnce, Repository, type Executor } from '../../infra/db/index.js';
import type { AuditEventsTable } from '../../infra/db/tables/audit.js';
import type { AuditEntry } from '../../infra/audit.js';

export type AuditEventRow = Selectable<AuditEventsTable>;

const COLUMNS = [
  'author_id',
  'author_name',
  'entity_type',
  'entity_id',
  'entity_path',
  'target_type',
  'target_id',
  'target_details',
  'event_name',
  'details',
  'ip_address',
  'created_at',
] as const satisfies readonly (keyof AuditEventsTable)[];
// Token creation and sign-in write one each: compiled once, run on SQLite's connection directly.
const INSERT = new CompiledOnce<unknown, AuditRowValues>(COLUMNS.length, (db, ...values: unknown[]) =>
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
export function entryValue(entry: AuditEntry, column: number): unknown {
  switch (column) {
    case 0:
      return entry.authorId;
    case 1:
      return entry.authorName;
    case 2:
      return entry.entityType;
    case 3:
      return entry.entityId;
    case 4:
      return entry.entityPath;
    case 5:
      return entry.targetType;
    case 6:
      return entry.targetId;
    case 7:
      return entry.targetDetails;
    case 8:
      return entry.eventName;
    case 9:
      return entry.details;
    case 10:
      return entry.ipAddress;
    default:
      return entry.at;
  }
}

/** The row values of `entry`, `details` still the object. */
function queuedValuesOf(entry: AuditEntry): QueuedRowValues {
  const values: unknown[] = [];
  for (let column = 0; column < COLUMNS.length; column += 1) values.push(entryValue(entry, column));
  return values as QueuedRowValues;
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
