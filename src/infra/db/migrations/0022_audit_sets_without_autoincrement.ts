import { sql } from 'kysely';
import { createSetsIndex, setsTable, viewSql } from './0021_audit_event_sets.js';
import { atomically, rebuildSqliteTable, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * On SQLite, `audit_event_sets` without AUTOINCREMENT (docs/performance.md "Audit"): the counter
 * kept in `sqlite_sequence` is a page of its own that every audited commit changed, one more
 * page in the log and for the checkpointer to copy. Ids still never repeat: a new set takes the
 * largest id plus one, and retention never deletes the newest set (it empties it instead,
 * src/modules/audit). When the counter stood above the largest id (the newest sets deleted), an
 * empty set under the counter's value carries it over. PostgreSQL's identity column has no such
 * page: unchanged there.
 */
export const auditSetsWithoutAutoincrementMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    if (dialect !== 'sqlite') return;
    await atomically(db, async (trx) => {
      const counter = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'audit_event_sets'`.execute(trx);
      await rebuild(trx, false);
      // The rebuild carries the counter for a table that no longer keeps one: an empty set carries it instead.
      await sql`delete from sqlite_sequence where name = 'audit_event_sets'`.execute(trx);
      const seq = Number(counter.rows[0]?.seq ?? 0);
      await sql`insert into audit_event_sets (id, entity_type, entity_id, first_at, last_at, event_count, events)
        select ${seq}, 'Gitlab::Audit::InstanceScope', 1, 0, 0, 0, ${EMPTY_SET}
        where ${seq} > coalesce((select max(id) from audit_event_sets), 0)`.execute(trx);
    });
  },
  async down(db: AnyDb) {
    if (dialect !== 'sqlite') return;
    await atomically(db, async (trx) => {
      await rebuild(trx, true);
      await sql`insert into sqlite_sequence (name, seq) select 'audit_event_sets', max(id) from audit_event_sets having max(id) is not null`.execute(
        trx,
      );
    });
  },
});

/** A set that holds no event (the format of src/modules/audit/audit-set.encoding.ts, frozen here). */
const EMPTY_SET = '{"shared":{},"rows":[]}';

/** The table made again with or without AUTOINCREMENT, every row and id kept; the view and index with it. */
async function rebuild(trx: AnyDb, autoincrement: boolean): Promise<void> {
  await sql`drop view audit_events`.execute(trx);
  await rebuildSqliteTable(trx, 'audit_event_sets', (name) =>
    setsTable(trx, name, (table) =>
      table.addColumn('id', 'integer', (c) => (autoincrement ? c.primaryKey().autoIncrement() : c.primaryKey())),
    ),
  );
  await createSetsIndex(trx);
  await sql.raw(viewSql('sqlite')).execute(trx);
}
