import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/infra/db/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

// 0009 rebuilds the OAuth token table on SQLite (dropping the digests' unique constraints) and
// changes its indexes on both databases: rows written before it must come through.
describe('migration 0009_oauth_token_ids on a database with tokens', () => {
  let database: TestDatabase;
  const now = 1_700_000_000_000;

  before(async () => {
    database = await createTestDatabase({ upTo: '0008_cache_epochs' });
    const db = database.handle.db;
    const user = await db
      .insertInto('users')
      .values({
        username: 'old',
        username_lower: 'old',
        name: 'Old',
        email: 'old@example.com',
        email_lower: 'old@example.com',
        password_hash: null,
        public_email: null,
        confirmed_at: null,
        current_sign_in_at: null,
        last_sign_in_at: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const app = await db
      .insertInto('oauth_applications')
      .values({
        uid: 'app-uid',
        name: 'App',
        redirect_uri: 'https://app.example/cb',
        scopes: 'api',
        secret_digest: 'd',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const token = (n: number, revoked: 0 | 1) => ({
      application_id: app.id,
      user_id: user.id,
      token_digest: `access-${n}`,
      refresh_digest: `refresh-${n}`,
      scopes: 'api',
      family: 'family-1',
      previous_id: null,
      redirect_uri: 'https://app.example/cb',
      expires_at: now + 7_200_000,
      revoked,
      revoked_at: revoked ? now : null,
      created_at: now,
    });
    await db
      .insertInto('oauth_access_tokens')
      .values([token(1, 1), token(2, 0), token(3, 0)])
      .execute();
    // The newest row went away (its application's cascade, say): its id must not come back.
    await db.deleteFrom('oauth_access_tokens').where('token_digest', '=', 'access-3').execute();
    await migrateToLatest(db, database.handle.dialect);
  });
  after(() => database.drop());

  it('keeps every row and revokes the live ones (they carry no id and cannot be presented again)', async () => {
    const rows = await database.handle.db
      .selectFrom('oauth_access_tokens')
      .select(['token_digest', 'refresh_digest', 'family', 'revoked'])
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.token_digest, r.refresh_digest, r.family, Number(r.revoked)]),
      [
        ['access-1', 'refresh-1', 'family-1', 1],
        ['access-2', 'refresh-2', 'family-1', 1],
      ],
    );
  });

  it('never hands out an id again, and allows equal digests (ids, not digests, identify tokens now)', async () => {
    const db = database.handle.db;
    const first = await db.selectFrom('oauth_access_tokens').select(['application_id', 'user_id']).executeTakeFirstOrThrow();
    const values = {
      ...first,
      token_digest: 'access-1',
      refresh_digest: 'refresh-1',
      scopes: 'api',
      family: 'family-2',
      created_at: now,
    };
    const inserted = await db.insertInto('oauth_access_tokens').values(values).returning('id').executeTakeFirstOrThrow();
    assert.equal(Number(inserted.id), 4);
  });

  it('revokes a family through its live-token index', async () => {
    const db = database.handle.db;
    const revoked = await sql`update oauth_access_tokens set revoked = 1 where revoked = 0 and family = ${'family-2'}`.execute(db);
    assert.equal(Number(revoked.numAffectedRows), 1);
    if (database.handle.dialect === 'sqlite') {
      const plan = await sql<{
        detail: string;
      }>`explain query plan update oauth_access_tokens set revoked = 1 where revoked = 0 and family = ${'x'}`.execute(db);
      assert.match(plan.rows.map((r) => r.detail).join('\n'), /oauth_access_tokens_live_family/);
    }
  });
});
