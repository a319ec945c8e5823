import { references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * What happened to an alert, for its page's activity list (status changes, assignment, the
 * incident); an alert's assignee; and the indexes the alert list pages through (docs/perf-lab.md
 * "Alert list"): newest first over every status (the Open and All tabs), and newest first within
 * one status (the Triggered, Acknowledged and Resolved tabs), so a page stops after its rows.
 */
export const alertActivityMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('alerts').addColumn('assignee_id', 'bigint', references('users', 'set null')).execute();
    await withId(db.schema.createTable('alert_activity'), dialect)
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('alert_id', 'bigint', (c) => c.notNull().references('alerts.id').onDelete('cascade'))
      .addColumn('kind', text, (c) => c.notNull())
      .addColumn('detail', text)
      .addColumn('author_id', 'bigint', references('users', 'set null'))
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('alert_activity_alert').on('alert_activity').columns(['alert_id', 'id']).execute();
    await db.schema.createIndex('alerts_project_started').on('alerts').columns(['project_id', 'started_at', 'id']).execute();
    await db.schema
      .createIndex('alerts_project_status_started')
      .on('alerts')
      .columns(['project_id', 'status', 'started_at', 'id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('alerts_project_status_started').execute();
    await db.schema.dropIndex('alerts_project_started').execute();
    await db.schema.dropTable('alert_activity').execute();
    await db.schema.alterTable('alerts').dropColumn('assignee_id').execute();
  },
});
