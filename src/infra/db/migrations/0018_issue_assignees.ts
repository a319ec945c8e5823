import { text, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * Issue assignees and due dates. `issue_assignees` joins an issue to each of its assignees
 * (several on Premium and Ultimate, the first only on Free); a user's row goes with the user,
 * an issue's with the issue. `issue_assignees_user` answers the `assignee_id` list filter.
 * `issues.due_date` is a calendar day as `YYYY-MM-DD` text on both dialects (it sorts and
 * compares as the day does); `issues_due_date` finds the open issues due on a day for the
 * daily `issue_due` mail.
 */
export const issueAssigneesMigration: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('issue_assignees')
      .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issues.id').onDelete('cascade'))
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('issue_assignees_pkey', ['issue_id', 'user_id'])
      .execute();
    await db.schema.createIndex('issue_assignees_user').on('issue_assignees').columns(['user_id', 'issue_id']).execute();
    await db.schema.alterTable('issues').addColumn('due_date', text).execute();
    await db.schema.createIndex('issues_due_date').on('issues').columns(['due_date', 'state']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('issues_due_date').execute();
    await db.schema.alterTable('issues').dropColumn('due_date').execute();
    await db.schema.dropTable('issue_assignees').execute();
  },
});
