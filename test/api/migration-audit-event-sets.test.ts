import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { auditEntry } from '../../src/infra/audit.js';
import { migrateToLatest } from '../../src/infra/db/index.js';
import { migrateTo } from '../../src/infra/db/migrator.js';
import { AuditRepository } from '../../src/modules/audit/audit.repository.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

// 0021 moves the events of `audit_events` and the queue of 0020 into `audit_event_sets`, and makes
// `audit_events` a view: every event must come through, under ids that are never handed out again.
describe('migration 0021_audit_event_sets on a database with events', () => {
  let database: TestDatabase;
  const now = 1_700_000_000_000;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tables of 0020, gone from today's schema type
  const untyped = () => database.handle.db as any;

  const event = (n: number) => ({
    author_id: 1,
    author_name: 'root',
    entity_type: 'User',
    entity_id: 7,
    entity_path: 'ada',
    target_type: 'PersonalAccessToken',
    target_id: n,
    target_details: `token ${n}`,
    event_name: 'personal_access_token_created',
    details: JSON.stringify({ scopes: ['api'] }),
    ip_address: '192.0.2.7',
    created_at: now + n,
  });

  before(async () => {
    database = await createTestDatabase({ upTo: '0020_audit_event_queue' });
    const db = untyped();
    await db
      .insertInto('audit_events')
      .values([event(1), event(2), event(3)])
      .execute();
    // The newest went (by hand): its id must not come back.
    await db.deleteFrom('audit_events').where('target_id', '=', 3).execute();
    // A queued commit of two events in 0020's format: shared columns by index, the rest in order.
    const queued = {
      shared: { 0: 1, 1: 'root', 2: 'Project', 3: 9, 4: 'g/p', 5: 'Member', 8: 'member_added', 9: { as: 'Developer' }, 10: null },
      rows: [
        [41, 'bob', now + 10],
        [42, 'eve', now + 11],
      ],
    };
    await db
      .insertInto('audit_event_queue')
      .values({ events: JSON.stringify(queued) })
      .execute();
    await migrateToLatest(database.handle.db, database.handle.dialect);
  });
  after(() => database.drop());

  it('keeps every event, the old ones as event `id * 100`, the queued ones after them', async () => {
    const rows = await database.handle.db.selectFrom('audit_events').selectAll().orderBy('id').execute();
    assert.deepEqual(
      rows.map((row) => [
        Number(row.id),
        row.entity_type,
        Number(row.entity_id),
        Number(row.target_id),
        row.target_details,
        Number(row.created_at),
      ]),
      [
        [100, 'User', 7, 1, 'token 1', now + 1],
        [200, 'User', 7, 2, 'token 2', now + 2],
        [400, 'Project', 9, 41, 'bob', now + 10],
        [500, 'Project', 9, 42, 'eve', now + 11],
      ],
    );
    assert.deepEqual(JSON.parse(rows[0]!.details), { scopes: ['api'] });
    assert.deepEqual(JSON.parse(rows[2]!.details), { as: 'Developer' });
    assert.equal(rows[2]?.ip_address, null);
    const repository = new AuditRepository(database.handle.db);
    const listed = await repository.page({}, 10, 0);
    assert.deepEqual(
      listed.map((row) => row.id),
      [500, 400, 200, 100],
    );
    // The view's details are the stored JSON as the database prints it (PostgreSQL's jsonb adds spaces).
    const parsed = (row: { details: string } | undefined) => row && { ...row, details: JSON.parse(row.details) as unknown };
    assert.deepEqual(parsed(await repository.findById(200)), parsed(rows[1]));
  });

  it('hands out set ids above every old event id, and drops the old table and the queue', async () => {
    const db = database.handle.db;
    await db
      .transaction()
      .execute((trx) =>
        AuditRepository.store(trx, [
          auditEntry(
            { authorId: 1, authorName: 'root', ipAddress: null },
            { entityType: 'User', entityId: 7, entityPath: 'ada', eventName: 'user_blocked', at: now + 20 },
          ),
        ]),
      );
    const newest = await new AuditRepository(db).page({}, 1, 0);
    assert.equal(newest[0]?.id, 600);
    const tables =
      database.handle.dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_schema where type = 'table' and name like 'audit%'`.execute(db)
        : await sql<{ name: string }>`select table_name as name from information_schema.tables
            where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name like 'audit%'`.execute(db);
    assert.deepEqual(
      tables.rows.map((row) => row.name),
      ['audit_event_sets'],
    );
  });

  it('goes down to a table of the same events', async () => {
    await migrateTo(database.handle.db, database.handle.dialect, '0020_audit_event_queue');
    const rows = (await untyped().selectFrom('audit_events').select(['id', 'target_id']).orderBy('id').execute()) as {
      id: number;
      target_id: number | null;
    }[];
    assert.deepEqual(
      rows.map((row) => [Number(row.id), row.target_id === null ? null : Number(row.target_id)]),
      [
        [100, 1],
        [200, 2],
        [400, 41],
        [500, 42],
        [600, null],
      ],
    );
    await migrateToLatest(database.handle.db, database.handle.dialect);
    assert.equal((await database.handle.db.selectFrom('audit_events').select('id').execute()).length, 5);
  });
});
