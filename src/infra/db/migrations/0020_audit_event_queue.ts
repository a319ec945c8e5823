import { text, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * `audit_event_queue`: the audit events of one shared commit, on their way to `audit_events`
 * (src/modules/audit until migration 0021 replaced both tables). One row per commit holds its events
 * as JSON text (text, so backups and `db copy` carry it as they carry every other table). No index and, on SQLite, no
 * AUTOINCREMENT: the row is the only page a commit adds for its events (docs/performance.md
 * "Audit"). Ids only order the rows for the writer that empties the table; one may be reused
 * once its row is gone, which is harmless.
 */
export const auditEventQueueMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('audit_event_queue')
      .addColumn('id', dialect === 'postgres' ? 'bigint' : 'integer', (c) =>
        dialect === 'postgres' ? c.generatedByDefaultAsIdentity().primaryKey() : c.primaryKey(),
      )
      .addColumn('events', text, (c) => c.notNull())
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('audit_event_queue').execute();
  },
});
