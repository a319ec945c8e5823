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
const INSERT = new CompiledOnce<unknown, InsertValues>(COLUMNS.length, (db, ...values: unknown[]) =>
  db.insertInto('audit_events').values(Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as Insertable<AuditEventsTable>),
);

type InsertValues = [
  number,
  string,
  string,
  number,
  string | null,
  string | null,
  number | null,
  string | null,
  string,
  string,
  string | null,
  number,
];

/** The INSERT's values, in COLUMNS' order; `details` as JSON (names, scopes and ids: small). */
function valuesOf(entry: AuditEntry): InsertValues {
  return [
    entry.authorId,
    entry.authorName,
    entry.entityType,
    entry.entityId,
    entry.entityPath,
    entry.targetType ?? null,
    entry.targetId ?? null,
    entry.targetDetails ?? null,
    entry.eventName,
    entry.details === undefined ? '{}' : JSON.stringify(entry.details),
    entry.ipAddress ?? null,
    entry.at,
  ];
}

export interface AuditFilter {
  createdAfter?: number;
  createdBefore?: number;
  entityType?: string;
  entityId?: number;
}

/** The `audit_events` table: written by the bus subscriber, read by the three lists, trimmed by retention. */
export class AuditRepository extends Repository {
  async insert(entry: AuditEntry): Promise<void> {
    await INSERT.rows(this.db, ...valuesOf(entry));
  }

  /**
   * The entry written at once on SQLite's connection, inside `executor`'s transaction: true, or
   * false when the caller must `await on(executor).insert(entry)` (PostgreSQL). No repository, no
   * promise: the write of a token creation or a sign-in (docs/performance.md "Audit").
   */
  static insertNow(executor: Executor, entry: AuditEntry): boolean {
    return INSERT.runNow(executor, ...valuesOf(entry));
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
