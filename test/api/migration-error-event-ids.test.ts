import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { migrateToLatest } from '../../src/infra/db/index.js';
import type { AnyDb } from '../../src/infra/db/migrations/helpers.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { errorRowForMigration, eventRowForMigration, insertProjectForMigration } from '../helpers/migration-data.js';

// 0010 makes event ids unique per error instead of per project (a table rebuild on SQLite):
// events stored before it must come through, ids must not be reused.
describe('migration 0010_error_event_ids on a database with events', () => {
  let database: TestDatabase;
  let projectId: number;
  let errorIds: number[];
  const now = 1_700_000_000_000;

  const event = (errorId: number, eventId: string) => eventRowForMigration(projectId, errorId, eventId, now);

  before(async () => {
    database = await createTestDatabase({ upTo: '0009_oauth_token_ids' });
    const db = database.handle.db;
    projectId = await insertProjectForMigration(db as AnyDb, now);
    const errorRow = (fingerprint: string) => errorRowForMigration(projectId, fingerprint, now);
    // The rows of the schema at 0009: no fingerprint_key yet (0011 adds it), so an untyped handle.
    const errors = await (db as AnyDb)
      .insertInto('error_tracking_errors')
      .values([errorRow('a'), errorRow('b')])
      .returning('id')
      .execute();
    errorIds = errors.map((e: { id: number }) => Number(e.id));
    await db
      .insertInto('error_tracking_error_events')
      .values([event(errorIds[0] as number, 'e1'), event(errorIds[0] as number, 'e2'), event(errorIds[1] as number, 'e3')])
      .execute();
    await db.deleteFrom('error_tracking_error_events').where('event_id', '=', 'e3').execute();
    await migrateToLatest(db, database.handle.dialect);
  });
  after(() => database.drop());

  it('keeps every event', async () => {
    const rows = await database.handle.db
      .selectFrom('error_tracking_error_events')
      .select(['error_id', 'event_id'])
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [Number(r.error_id), r.event_id]),
      [
        [errorIds[0], 'e1'],
        [errorIds[0], 'e2'],
      ],
    );
  });

  it('refuses an event twice for one error (same id and time, or same id without a time of its own), takes it for another, and never reuses an id', async () => {
    const db = database.handle.db;
    const [first, second] = errorIds as [number, number];
    // The rows above have occurred_at = received_at: events without a usable timestamp.
    await assert.rejects(db.insertInto('error_tracking_error_events').values(event(first, 'e1')).execute());
    const timed = { ...event(first, 't1'), occurred_at: now - 5_000 };
    await db.insertInto('error_tracking_error_events').values(timed).execute();
    await assert.rejects(
      db
        .insertInto('error_tracking_error_events')
        .values({ ...timed, received_at: now + 1 })
        .execute(),
    );
    await db
      .insertInto('error_tracking_error_events')
      .values({ ...timed, occurred_at: now - 4_000 })
      .execute();
    const inserted = await db
      .insertInto('error_tracking_error_events')
      .values(event(second, 'e1'))
      .returning('id')
      .executeTakeFirstOrThrow();
    assert.ok(Number(inserted.id) > 5, `id ${inserted.id} comes after the others (the deleted event's 3 included)`);
  });
});
