import { bool, references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * Integrated error tracking (SPEC "Error tracking settings", "Client key"): one settings row
 * per project, client keys (DSNs), grouped errors, their events, release-health session
 * counts, and the single row that keeps one retention job scheduled.
 */
export const errorTrackingMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('error_tracking_settings')
      .addColumn('project_id', 'bigint', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
      .addColumn('active', bool, (c) => c.notNull())
      .addColumn('integrated', bool, (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('error_tracking_client_keys'), dialect)
      .addColumn('project_id', 'bigint', references('projects'))
      .addColumn('public_key', text, (c) => c.notNull().unique())
      .addColumn('active', bool, (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('et_client_keys_project').on('error_tracking_client_keys').columns(['project_id', 'id']).execute();

    await withId(db.schema.createTable('error_tracking_errors'), dialect)
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('fingerprint', text, (c) => c.notNull())
      .addColumn('title', text, (c) => c.notNull())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('description', text, (c) => c.notNull())
      .addColumn('culprit', text, (c) => c.notNull())
      .addColumn('platform', text, (c) => c.notNull())
      .addColumn('status', text, (c) => c.notNull().defaultTo('unresolved'))
      .addColumn('events_count', 'bigint', (c) => c.notNull())
      .addColumn('first_seen_at', ts, (c) => c.notNull())
      .addColumn('last_seen_at', ts, (c) => c.notNull())
      .addColumn('issue_iid', 'bigint')
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .addUniqueConstraint('et_errors_project_fingerprint', ['project_id', 'fingerprint'])
      .execute();
    await db.schema.createIndex('et_errors_list').on('error_tracking_errors').columns(['project_id', 'status', 'last_seen_at']).execute();

    await withId(db.schema.createTable('error_tracking_error_events'), dialect)
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
      .addColumn('payload', text, (c) => c.notNull())
      .addUniqueConstraint('et_events_project_event', ['project_id', 'event_id'])
      .execute();
    await db.schema.createIndex('et_events_error_time').on('error_tracking_error_events').columns(['error_id', 'occurred_at']).execute();
    await db.schema.createIndex('et_events_time').on('error_tracking_error_events').columns(['occurred_at', 'id']).execute();

    // Release health: session updates folded into hourly counters (Sentry "session" and
    // "sessions" envelope items); raw session updates are not kept.
    await db.schema
      .createTable('error_tracking_session_counts')
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('release', text, (c) => c.notNull())
      .addColumn('environment', text, (c) => c.notNull())
      .addColumn('bucket_at', ts, (c) => c.notNull())
      .addColumn('started', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('exited', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('errored', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('crashed', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('abnormal', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('et_session_counts_pk', ['project_id', 'release', 'environment', 'bucket_at'])
      .execute();
    await db.schema.createIndex('et_session_counts_time').on('error_tracking_session_counts').column('bucket_at').execute();

    // One row per periodic job kind: updated first in the scheduling transaction, so two
    // processes starting together cannot both enqueue a retention run.
    await db.schema
      .createTable('error_tracking_schedules')
      .addColumn('name', text, (c) => c.primaryKey())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
  },
  async down(db: AnyDb) {
    for (const table of [
      'error_tracking_schedules',
      'error_tracking_session_counts',
      'error_tracking_error_events',
      'error_tracking_errors',
      'error_tracking_client_keys',
      'error_tracking_settings',
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
});
