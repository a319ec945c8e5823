import { bool, references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * OAuth 2.0 provider: applications, authorization codes, access tokens (each row holds an
 * access token and its refresh token; rotation links rows of one family), device grants and
 * the OpenID Connect signing key. Every secret is stored only as a SHA-256 digest.
 */
export const oauthMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('oauth_applications'), dialect)
      .addColumn('uid', text, (c) => c.notNull().unique())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('redirect_uri', text, (c) => c.notNull())
      .addColumn('scopes', text, (c) => c.notNull())
      .addColumn('confidential', bool, (c) => c.notNull().defaultTo(1))
      .addColumn('secret_digest', text, (c) => c.notNull())
      .addColumn('owner_id', 'bigint', references('users'))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oauth_applications_owner').on('oauth_applications').column('owner_id').execute();

    await withId(db.schema.createTable('oauth_access_grants'), dialect)
      .addColumn('application_id', 'bigint', (c) => c.notNull().references('oauth_applications.id').onDelete('cascade'))
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('code_digest', text, (c) => c.notNull().unique())
      // One consent form submission makes at most one code (replayed POSTs are refused).
      .addColumn('interaction_id', text, (c) => c.unique())
      .addColumn('redirect_uri', text, (c) => c.notNull())
      .addColumn('scopes', text, (c) => c.notNull())
      .addColumn('code_challenge', text)
      .addColumn('code_challenge_method', text)
      .addColumn('nonce', text)
      .addColumn('root_namespace_id', 'bigint')
      .addColumn('family', text, (c) => c.notNull())
      .addColumn('auth_time', ts)
      .addColumn('expires_at', ts, (c) => c.notNull())
      .addColumn('consumed_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('oauth_access_tokens'), dialect)
      .addColumn('application_id', 'bigint', (c) => c.notNull().references('oauth_applications.id').onDelete('cascade'))
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('token_digest', text, (c) => c.notNull().unique())
      .addColumn('refresh_digest', text, (c) => c.unique())
      .addColumn('scopes', text, (c) => c.notNull())
      // Every token issued from one code or device grant, through all its refreshes.
      .addColumn('family', text, (c) => c.notNull())
      .addColumn('previous_id', 'bigint')
      .addColumn('redirect_uri', text)
      .addColumn('expires_at', ts)
      .addColumn('revoked', bool, (c) => c.notNull().defaultTo(0))
      // 1 when the row was revoked because its refresh token was exchanged (reuse detection).
      .addColumn('rotated', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('revoked_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oauth_access_tokens_family').on('oauth_access_tokens').column('family').execute();
    await db.schema.createIndex('oauth_access_tokens_user').on('oauth_access_tokens').column('user_id').execute();

    await withId(db.schema.createTable('oauth_device_grants'), dialect)
      .addColumn('application_id', 'bigint', (c) => c.notNull().references('oauth_applications.id').onDelete('cascade'))
      .addColumn('device_code_digest', text, (c) => c.notNull().unique())
      .addColumn('user_code_digest', text, (c) => c.notNull().unique())
      .addColumn('scopes', text, (c) => c.notNull())
      .addColumn('status', text, (c) => c.notNull().defaultTo('pending'))
      .addColumn('user_id', 'bigint', references('users'))
      .addColumn('interval_seconds', 'integer', (c) => c.notNull())
      .addColumn('last_polled_at', ts)
      .addColumn('family', text, (c) => c.notNull())
      .addColumn('expires_at', ts, (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('oauth_signing_keys'), dialect)
      // One row per purpose: concurrent first starts race on this unique key and one wins.
      .addColumn('purpose', text, (c) => c.notNull().unique())
      .addColumn('kid', text, (c) => c.notNull())
      .addColumn('algorithm', text, (c) => c.notNull())
      .addColumn('public_jwk', text, (c) => c.notNull())
      // AES-256-GCM under a key derived from SECRET_KEY_BASE.
      .addColumn('private_jwk_sealed', text, (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
  },
});
