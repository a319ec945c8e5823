import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { auditEntry, type AuditEntry } from '../../src/infra/audit.js';
import { migrateToLatest } from '../../src/infra/db/index.js';
import { migrateTo } from '../../src/infra/db/migrator.js';
import { AuditRepository } from '../../src/modules/audit/audit.repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

// 0022 rebuilds `audit_event_sets` without AUTOINCREMENT on SQLite (one page less a commit): every
// event keeps its id, and an id once handed out is never handed out again.
describe('migration 0022_audit_sets_without_autoincrement', () => {
  let database: TestDatabase;
  const now = 1_700_000_000_000;
  const entry = (n: number): AuditEntry =>
    auditEntry(
      { authorId: 1, authorName: 'root', ipAddress: '192.0.2.7' },
      {
        entityType: 'User',
        entityId: 7,
        entityPath: 'ada',
        targetType: 'PersonalAccessToken',
        targetId: n,
        eventName: 'token_created',
        at: now + n,
      },
    );
  const store = (entries: AuditEntry[]) => database.handle.db.transaction().execute((trx) => AuditRepository.store(trx, entries));
  const ids = async () =>
    (await database.handle.db.selectFrom('audit_events').select(['id', 'target_id']).orderBy('id').execute()).map((row) => [
      Number(row.id),
      Number(row.target_id),
    ]);
  const tableSql = async () =>
    (await sql<{ sql: string }>`select sql from sqlite_schema where name = 'audit_event_sets'`.execute(database.handle.db)).rows[0]?.sql ??
    '';

  /** The events before the migration (ids are dialect's: PostgreSQL's sequence starts at 2 after 0021). */
  let kept: number[][];
  /** The id of the set deleted by hand before the migration. */
  let deleted: number;

  before(async () => {
    database = await createTestDatabase({ upTo: '0021_audit_event_sets' });
    await store([entry(1), entry(2)]);
    await store([entry(3)]);
    await store([entry(4)]);
    // The newest set went (by hand): its id must not come back.
    const newest = await database.handle.db.selectFrom('audit_event_sets').select('id').orderBy('id', 'desc').executeTakeFirstOrThrow();
    deleted = Number(newest.id);
    await database.handle.db.deleteFrom('audit_event_sets').where('id', '=', deleted).execute();
    kept = await ids();
    await migrateToLatest(database.handle.db, database.handle.dialect);
  });
  after(() => database.drop());

  it('keeps every event under its id', async () => {
    assert.deepEqual(
      kept.map(([, target]) => target),
      [1, 2, 3],
    );
    assert.deepEqual(await ids(), kept);
  });

  it('on SQLite, leaves no AUTOINCREMENT counter to write on every commit', async (t) => {
    if (database.handle.dialect !== 'sqlite') return t.skip('PostgreSQL keeps its identity column');
    assert.doesNotMatch(await tableSql(), /autoincrement/i);
    const counter = await sql`select seq from sqlite_sequence where name = 'audit_event_sets'`.execute(database.handle.db);
    assert.equal(counter.rows.length, 0);
  });

  it('hands out ids above every one handed out before, the deleted set’s included', async () => {
    await store([entry(5)]);
    const newest = await new AuditRepository(database.handle.db).page({}, 1, 0);
    assert.equal(newest[0]?.id, (deleted + 1) * 100);
    assert.equal(await new AuditRepository(database.handle.db).count({}), 4, 'the set carrying the counter holds no event');
  });

  it('goes down to AUTOINCREMENT and up again with the same events', async () => {
    await migrateTo(database.handle.db, database.handle.dialect, '0021_audit_event_sets');
    if (database.handle.dialect === 'sqlite') assert.match(await tableSql(), /autoincrement/i);
    await migrateToLatest(database.handle.db, database.handle.dialect);
    assert.deepEqual(await ids(), [...kept, [(deleted + 1) * 100, 5]]);
    await store([entry(6)]);
    assert.equal((await new AuditRepository(database.handle.db).page({}, 1, 0))[0]?.id, (deleted + 2) * 100);
  });
});
