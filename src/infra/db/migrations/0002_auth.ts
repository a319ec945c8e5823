import { bool, references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/** Sessions, CI job tokens and spam logs (issue 3). */
export const authMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('sessions'), dialect)
      .addColumn('session_digest', text, (c) => c.notNull().unique())
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('ip', text)
      .addColumn('user_agent', text)
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('expires_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
    await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();

    await withId(db.schema.createTable('ci_jobs'), dialect)
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('token_digest', text, (c) => c.notNull().unique())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('ref', text, (c) => c.notNull())
      .addColumn('status', text, (c) => c.notNull().defaultTo('running'))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('finished_at', ts)
      .execute();
    await db.schema.createIndex('ci_jobs_project').on('ci_jobs').columns(['project_id', 'id']).execute();

    await withId(db.schema.createTable('spam_logs'), dialect)
      .addColumn('user_id', 'bigint', (c) => references('users')(c.notNull()))
      .addColumn('noteable_type', text, (c) => c.notNull())
      .addColumn('title', text, (c) => c.notNull())
      .addColumn('description', text, (c) => c.notNull())
      .addColumn('reason', text, (c) => c.notNull())
      .addColumn('source_ip', text)
      .addColumn('user_agent', text)
      .addColumn('recaptcha_verified', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('spam_logs_user').on('spam_logs').column('user_id').execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('spam_logs').execute();
    await db.schema.dropTable('ci_jobs').execute();
    await db.schema.dropTable('sessions').execute();
  },
});
