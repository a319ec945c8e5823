import { sql } from 'kysely';
import { atomically, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * One durable outbox for everything that leaves the server (src/infra/outbox). The alert e-mail
 * outbox folds into it: its unsent rows become pending `email` items, then its table goes.
 */
export const outboxMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await atomically(db, async (trx) => {
      await withId(trx.schema.createTable('outbox'), dialect)
        .addColumn('kind', text, (c) => c.notNull())
        .addColumn('message_id', text, (c) => c.notNull().unique())
        .addColumn('payload', text, (c) => c.notNull())
        .addColumn('state', text, (c) => c.notNull().defaultTo('pending'))
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', ts, (c) => c.notNull())
        .addColumn('last_error', text)
        .addColumn('lease_owner', text)
        .addColumn('lease_until', ts)
        .addColumn('created_at', ts, (c) => c.notNull())
        .addColumn('updated_at', ts, (c) => c.notNull())
        .addColumn('settled_at', ts)
        .execute();
      // Claiming reads due items by (state, next_attempt_at); expired leases by (state, lease_until).
      await trx.schema.createIndex('outbox_due').on('outbox').columns(['state', 'next_attempt_at', 'id']).execute();
      await trx.schema.createIndex('outbox_lease').on('outbox').columns(['state', 'lease_until']).execute();
      await trx.schema.createIndex('outbox_kind_state').on('outbox').columns(['kind', 'state']).execute();

      const rows = await trx
        .selectFrom('alert_email_outbox')
        .select(['id', 'recipient', 'subject', 'body', 'created_at'])
        .where('sent_at', 'is', null)
        .execute();
      for (const row of rows as { id: number; recipient: string; subject: string; body: string; created_at: number }[]) {
        await trx
          .insertInto('outbox')
          .values({
            kind: 'email',
            message_id: `alert-email-${row.id}-${row.created_at}@basalt.migrated`,
            payload: JSON.stringify({ to: row.recipient, subject: row.subject, text: row.body, reason: 'participating' }),
            state: 'pending',
            attempts: 0,
            next_attempt_at: row.created_at,
            created_at: row.created_at,
            updated_at: row.created_at,
          })
          .execute();
      }
      await trx.schema.dropTable('alert_email_outbox').execute();
    });
  },
  async down(db: AnyDb) {
    await atomically(db, async (trx) => {
      await sql`drop table outbox`.execute(trx);
    });
  },
});
