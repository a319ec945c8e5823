import { sql } from 'kysely';
import { atomically, rebuildSqliteTable, text, ts, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * Event ids are deduplicated per error and time instead of per project (docs/decisions.md
 * "Error tracking"): an SDK retry carries the same payload, so it groups onto the same error
 * with the same timestamp and is still stored once. Event ids are random, so the per-project
 * index took a write to a random page for every event; `(error_id, occurred_at, event_id)`
 * takes events in time order at the end of their error's range, and serves every query the
 * `(error_id, occurred_at)` index served, which goes. An event without a usable timestamp has
 * `occurred_at = received_at` (both the receive time), so a retry of it would have another
 * time: those few are deduplicated by `(error_id, event_id)` in a partial index of their own.
 * SQLite cannot drop a table constraint, so there the table is rebuilt (no table refers to
 * this one). On a large events table this copies every row once (docs/operations.md
 * "Upgrading").
 */
export const errorEventIdsMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await atomically(db, async (trx) => {
      if (dialect === 'postgres') {
        await sql`alter table error_tracking_error_events drop constraint et_events_project_event`.execute(trx);
        await sql`drop index et_events_error_time`.execute(trx);
      } else {
        await rebuildEvents(trx);
      }
      await sql`create unique index et_events_error_time_event on error_tracking_error_events (error_id, occurred_at, event_id)`.execute(
        trx,
      );
      await sql`create unique index et_events_untimed on error_tracking_error_events (error_id, event_id) where occurred_at = received_at`.execute(
        trx,
      );
    });
  },
  async down(db: AnyDb) {
    await atomically(db, async (trx) => {
      await sql`drop index et_events_untimed`.execute(trx);
      await sql`drop index et_events_error_time_event`.execute(trx);
      await sql`create index et_events_error_time on error_tracking_error_events (error_id, occurred_at)`.execute(trx);
      await sql`create unique index et_events_project_event on error_tracking_error_events (project_id, event_id)`.execute(trx);
    });
  },
});

async function rebuildEvents(trx: AnyDb): Promise<void> {
  await rebuildSqliteTable(trx, 'error_tracking_error_events', (name) =>
    trx.schema
      .createTable(name)
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('project_id', 'bigint', (c) => c.notNull())
      .addColumn('error_id', 'bigint', (c) => c.notNull().references('error_tracking_errors.id').onDelete('cascade'))
      .addColumn('event_id', text, (c) => c.notNull())
      .addColumn('occurred_at', ts, (c) => c.notNull())
      .addColumn('received_at', ts, (c) => c.notNull())
      .addColumn('level', text, (c) => c.notNull())
      .addColumn('environment', text)
      .addColumn('release', text)
      .addColumn('user_identifier', text)
      .addColumn('description', text, (c) => c.notNull())
      .addColumn('payload', text, (c) => c.notNull()),
  );
  await trx.schema.createIndex('et_events_time').on('error_tracking_error_events').columns(['occurred_at', 'id']).execute();
}
