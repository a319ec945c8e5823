import { bool, ts, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * What the mails of issue 23's last events need:
 * - `user_sign_in_addresses`: the addresses each user signed in from with a password, one row
 *   per user and address (the primary key is the sign-in's one indexed read), a few per user
 *   (the oldest is dropped when a new one arrives over the bound, identity's sign-in-addresses);
 *   a sign-in from an address not in it mails the user.
 * - `error_tracking_settings.email_notifications`: whether new and regressed errors mail the
 *   project's maintainers (on by default, for the settings that exist too).
 * - `error_tracking_errors.regressed_at`: when an event last reopened the resolved error; the
 *   ingestion upsert sets it and returns it, so a regression is known without another read.
 */
export const notificationMailEventsMigration: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('user_sign_in_addresses')
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('first_seen_at', ts, (c) => c.notNull())
      .addColumn('last_seen_at', ts, (c) => c.notNull())
      .addPrimaryKeyConstraint('user_sign_in_addresses_pkey', ['user_id', 'ip'])
      .execute();
    await db.schema
      .alterTable('error_tracking_settings')
      .addColumn('email_notifications', bool, (c) => c.notNull().defaultTo(1))
      .execute();
    await db.schema.alterTable('error_tracking_errors').addColumn('regressed_at', ts).execute();
  },
  async down(db: AnyDb) {
    await db.schema.alterTable('error_tracking_errors').dropColumn('regressed_at').execute();
    await db.schema.alterTable('error_tracking_settings').dropColumn('email_notifications').execute();
    await db.schema.dropTable('user_sign_in_addresses').execute();
  },
});
