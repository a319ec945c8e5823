import { bool, references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

// Frozen copy of the notification event names as they were when this migration shipped
// (SPEC "Notification setting"); one nullable 0/1 column each, NULL meaning "default".
const EMAIL_EVENTS = [
  'new_release',
  'new_note',
  'new_issue',
  'reopen_issue',
  'close_issue',
  'reassign_issue',
  'issue_due',
  'new_merge_request',
  'push_to_merge_request',
  'reopen_merge_request',
  'close_merge_request',
  'reassign_merge_request',
  'change_reviewer_merge_request',
  'merge_merge_request',
  'failed_pipeline',
  'fixed_pipeline',
  'success_pipeline',
  'moved_project',
  'merge_when_pipeline_succeeds',
  'new_epic',
  'approver',
] as const;

/** Notification settings, secondary user emails, activity events and push payloads. */
export const notificationsEventsMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    // source_kind 'global' has source_id 0 so the unique key works on both dialects.
    let settings = withId(db.schema.createTable('notification_settings'), dialect)
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('source_kind', text, (c) => c.notNull())
      .addColumn('source_id', 'bigint', (c) => c.notNull())
      .addColumn('level', text, (c) => c.notNull())
      .addColumn('notification_email', text);
    for (const event of EMAIL_EVENTS) settings = settings.addColumn(event, bool);
    await settings
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .addUniqueConstraint('notification_settings_user_source', ['user_id', 'source_kind', 'source_id'])
      .execute();
    await db.schema.createIndex('notification_settings_source').on('notification_settings').columns(['source_kind', 'source_id']).execute();

    await withId(db.schema.createTable('user_emails'), dialect)
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('email', text, (c) => c.notNull())
      .addColumn('email_lower', text, (c) => c.notNull().unique())
      .addColumn('confirmed_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('user_emails_user').on('user_emails').column('user_id').execute();

    // Activity events. action is the integer of reference §2.5 (created 1 ... approved 12).
    await withId(db.schema.createTable('events'), dialect)
      .addColumn('project_id', 'bigint', references('projects'))
      .addColumn('author_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('action', 'integer', (c) => c.notNull())
      .addColumn('target_type', text)
      .addColumn('target_id', 'bigint')
      .addColumn('imported_from', text, (c) => c.notNull().defaultTo('none'))
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    // Lists are ordered by id and filtered by day ranges of created_at; ids grow with
    // created_at, so (owner, id) serves the sort and (owner, created_at) the date range.
    await db.schema.createIndex('events_project_id').on('events').columns(['project_id', 'id']).execute();
    await db.schema.createIndex('events_project_created').on('events').columns(['project_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('events_author_id').on('events').columns(['author_id', 'id']).execute();
    await db.schema.createIndex('events_author_created').on('events').columns(['author_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('events_target').on('events').columns(['target_type', 'target_id']).execute();

    await db.schema
      .createTable('push_event_payloads')
      .addColumn('event_id', 'bigint', (c) => c.primaryKey().references('events.id').onDelete('cascade'))
      .addColumn('commit_count', 'integer', (c) => c.notNull())
      .addColumn('action', text, (c) => c.notNull())
      .addColumn('ref_type', text, (c) => c.notNull())
      .addColumn('commit_from', text)
      .addColumn('commit_to', text)
      .addColumn('ref', text)
      .addColumn('commit_title', text)
      .addColumn('ref_count', 'integer')
      .execute();
  },
});
