import { sql } from 'kysely';
import { atomically, bool, rebuildSqliteTable, text, ts, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * OAuth tokens carry their row id (`bso_<id>_<secret>`, docs/decisions.md "OAuth token
 * format"): a token is found by primary key and its secret checked against the stored
 * digest, so the digests need no unique indexes. Each of those indexes cost every token
 * issued a write to a random page. The family index keeps live tokens only: revoking a
 * family only ever looks for live ones, and a rotation moves the family's one live entry.
 * Tokens issued before carry no id and can no longer be presented: they are revoked here.
 */
export const oauthTokenIdsMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await atomically(db, async (trx) => {
      await sql`update oauth_access_tokens set revoked = 1, revoked_at = ${Date.now()} where revoked = 0`.execute(trx);
      await sql`drop index oauth_access_tokens_family`.execute(trx);
      if (dialect === 'postgres') {
        await sql`alter table oauth_access_tokens drop constraint oauth_access_tokens_token_digest_key`.execute(trx);
        await sql`alter table oauth_access_tokens drop constraint oauth_access_tokens_refresh_digest_key`.execute(trx);
      } else {
        await rebuildWithoutUniqueDigests(trx);
      }
      await sql`create index oauth_access_tokens_live_family on oauth_access_tokens (family) where revoked = 0`.execute(trx);
    });
  },
  async down(db: AnyDb) {
    await atomically(db, async (trx) => {
      await sql`drop index oauth_access_tokens_live_family`.execute(trx);
      await trx.schema.createIndex('oauth_access_tokens_family').on('oauth_access_tokens').column('family').execute();
      await trx.schema.createIndex('oauth_access_tokens_token_digest').unique().on('oauth_access_tokens').column('token_digest').execute();
      await trx.schema
        .createIndex('oauth_access_tokens_refresh_digest')
        .unique()
        .on('oauth_access_tokens')
        .column('refresh_digest')
        .execute();
    });
  },
});

async function rebuildWithoutUniqueDigests(trx: AnyDb): Promise<void> {
  // The digests lose their UNIQUE constraints; everything else is as 0003 made it.
  await rebuildSqliteTable(trx, 'oauth_access_tokens', (name) =>
    trx.schema
      .createTable(name)
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('application_id', 'bigint', (c) => c.notNull().references('oauth_applications.id').onDelete('cascade'))
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('token_digest', text, (c) => c.notNull())
      .addColumn('refresh_digest', text)
      .addColumn('scopes', text, (c) => c.notNull())
      .addColumn('family', text, (c) => c.notNull())
      .addColumn('previous_id', 'bigint')
      .addColumn('redirect_uri', text)
      .addColumn('expires_at', ts)
      .addColumn('revoked', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('rotated', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('revoked_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull()),
  );
  await trx.schema.createIndex('oauth_access_tokens_user').on('oauth_access_tokens').column('user_id').execute();
}
