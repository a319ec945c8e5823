import type { AnyDb, MigrationFactory } from './helpers.js';

/**
 * The error list pages read a page of a project's errors in the order of each sort (last seen,
 * first seen, frequency), in one status or all of them, and count each tab up to a cap: each
 * order has its index, so a page stops after its rows and a capped count after its cap, whatever
 * the project holds (100,000 errors, docs/performance.md). `id` ends each index because it breaks
 * ties in every order (PostgreSQL would sort otherwise; SQLite's rowid is implicit). The list's
 * sparklines and the event navigation use et_events_error_time (error_id, occurred_at).
 */
const INDEXES: readonly [string, readonly string[]][] = [
  ['et_errors_status_last_seen', ['project_id', 'status', 'last_seen_at', 'id']],
  ['et_errors_last_seen', ['project_id', 'last_seen_at', 'id']],
  ['et_errors_status_first_seen', ['project_id', 'status', 'first_seen_at', 'id']],
  ['et_errors_first_seen', ['project_id', 'first_seen_at', 'id']],
  ['et_errors_status_frequency', ['project_id', 'status', 'events_count', 'id']],
  ['et_errors_frequency', ['project_id', 'events_count', 'id']],
];

export const errorPagesMigration: MigrationFactory = () => ({
  async up(db: AnyDb) {
    // Replaced by et_errors_status_last_seen, the same columns and `id`.
    await db.schema.dropIndex('et_errors_list').execute();
    for (const [name, columns] of INDEXES) {
      await db.schema
        .createIndex(name)
        .on('error_tracking_errors')
        .columns([...columns])
        .execute();
    }
  },
  async down(db: AnyDb) {
    for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
    await db.schema.createIndex('et_errors_list').on('error_tracking_errors').columns(['project_id', 'status', 'last_seen_at']).execute();
  },
});
