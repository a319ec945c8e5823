import { bool, references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * Outbound webhooks: the hooks of projects and groups (one table, exactly one owner set) with
 * their failure state, and the log of recent deliveries each hook's settings page shows.
 */
export const webhooksMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('web_hooks'), dialect)
      .addColumn('project_id', 'bigint', references('projects'))
      .addColumn('group_id', 'bigint', references('namespaces'))
      .addColumn('uuid', text, (c) => c.notNull())
      .addColumn('url', text, (c) => c.notNull())
      .addColumn('name', text, (c) => c.notNull().defaultTo(''))
      .addColumn('description', text, (c) => c.notNull().defaultTo(''))
      .addColumn('token_sealed', text)
      .addColumn('push_events', bool, (c) => c.notNull().defaultTo(1))
      .addColumn('tag_push_events', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('issues_events', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('confidential_issues_events', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('note_events', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('confidential_note_events', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('enable_ssl_verification', bool, (c) => c.notNull().defaultTo(1))
      .addColumn('push_events_branch_filter', text)
      .addColumn('branch_filter_strategy', text, (c) => c.notNull().defaultTo('wildcard'))
      .addColumn('recent_failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('backoff_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('disabled_until', ts)
      .addColumn('permanently_disabled', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('web_hooks_project').on('web_hooks').columns(['project_id', 'id']).execute();
    await db.schema.createIndex('web_hooks_group').on('web_hooks').columns(['group_id', 'id']).execute();

    await withId(db.schema.createTable('web_hook_logs'), dialect)
      .addColumn('web_hook_id', 'bigint', (c) => c.notNull().references('web_hooks.id').onDelete('cascade'))
      .addColumn('trigger', text, (c) => c.notNull())
      .addColumn('url', text, (c) => c.notNull())
      .addColumn('request_headers', text, (c) => c.notNull())
      .addColumn('request_data', text, (c) => c.notNull())
      .addColumn('response_status', text, (c) => c.notNull())
      .addColumn('response_headers', text, (c) => c.notNull())
      .addColumn('response_body', text, (c) => c.notNull())
      .addColumn('execution_duration_ms', 'integer', (c) => c.notNull())
      .addColumn('internal_error_message', text)
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('web_hook_logs_hook').on('web_hook_logs').columns(['web_hook_id', 'id']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('web_hook_logs').execute();
    await db.schema.dropTable('web_hooks').execute();
  },
});
