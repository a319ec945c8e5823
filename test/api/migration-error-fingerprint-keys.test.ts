import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { migrateToLatest } from '../../src/infra/db/index.js';
import type { AnyDb } from '../../src/infra/db/migrations/helpers.js';
import { systemClock } from '../../src/infra/clock.js';
import { normalizeEvent } from '../../src/modules/error-tracking/event.rules.js';
import { IngestionRepository } from '../../src/modules/error-tracking/ingestion.repository.js';
import { IngestionService } from '../../src/modules/error-tracking/ingestion.service.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { errorRowForMigration, eventRowForMigration, insertProjectForMigration } from '../helpers/migration-data.js';

// 0011 keys errors by 64 bits of their fingerprint (a table rebuild on SQLite, which the
// events table refers to): errors and events stored before it must come through, a new event
// of an old error must still group onto it, and deleting an error must still take its events.
describe('migration 0011_error_fingerprint_keys on a database with errors and events', () => {
  let database: TestDatabase;
  let projectId: number;
  let errorIds: number[];
  const now = 1_700_000_000_000;
  const event = (type: string) => ({
    event_id: `${type.toLowerCase().padEnd(32, '0')}`.slice(0, 32),
    timestamp: now / 1000,
    platform: 'node',
    exception: { values: [{ type, value: 'boom', stacktrace: { frames: [{ function: 'run', module: 'app', in_app: true }] } }] },
  });
  const fingerprintOf = (type: string) => normalizeEvent(event(type), { now, clientIp: '127.0.0.1' }).fingerprint;

  before(async () => {
    database = await createTestDatabase({ upTo: '0010_error_event_ids' });
    // The schema at 0010: no fingerprint_key yet, so an untyped handle.
    const db = database.handle.db as AnyDb;
    projectId = await insertProjectForMigration(db, now);
    const errorRow = (fingerprint: string) => errorRowForMigration(projectId, fingerprint, now);
    // Two errors as the application groups them, and one left from a hand-made fingerprint.
    const errors = await db
      .insertInto('error_tracking_errors')
      .values([errorRow(fingerprintOf('FirstError')), errorRow(fingerprintOf('SecondError')), errorRow('made by hand')])
      .returning('id')
      .execute();
    errorIds = errors.map((e: { id: number }) => Number(e.id));
    const eventRow = (errorId: number, eventId: string) => eventRowForMigration(projectId, errorId, eventId, now);
    await db
      .insertInto('error_tracking_error_events')
      .values(errorIds.map((id, i) => eventRow(id, `e${i}`)))
      .execute();
    await migrateToLatest(database.handle.db, database.handle.dialect);
  });
  after(() => database.drop());

  const countErrors = async () =>
    Number(
      (
        await database.handle.db
          .selectFrom('error_tracking_errors')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const eventsOf = async (errorId: number) =>
    (
      await database.handle.db
        .selectFrom('error_tracking_error_events')
        .select('event_id')
        .where('error_id', '=', errorId)
        .orderBy('id')
        .execute()
    ).map((r) => r.event_id);

  it('keeps every error and every event', async () => {
    assert.equal(await countErrors(), 3);
    assert.deepEqual(await eventsOf(errorIds[0] as number), ['e0']);
    assert.deepEqual(await eventsOf(errorIds[1] as number), ['e1']);
    assert.deepEqual(await eventsOf(errorIds[2] as number), ['e2']);
  });

  it('groups a new event of an error stored before onto it, and a new error onto a new row with a later id', async () => {
    const ingestion = new IngestionService(database.handle.transact, new IngestionRepository(database.handle.db), systemClock);
    await ingestion.storeEvent(projectId, { ...event('FirstError'), event_id: 'a'.repeat(32) }, '127.0.0.1');
    assert.equal(await countErrors(), 3);
    const first = await database.handle.db
      .selectFrom('error_tracking_errors')
      .select('events_count')
      .where('id', '=', errorIds[0] as number)
      .executeTakeFirstOrThrow();
    assert.equal(Number(first.events_count), 2);
    assert.deepEqual(await eventsOf(errorIds[0] as number), ['e0', 'a'.repeat(32)]);

    await ingestion.storeEvent(projectId, event('ThirdError'), '127.0.0.1');
    const rows = await database.handle.db.selectFrom('error_tracking_errors').select('id').orderBy('id').execute();
    assert.equal(rows.length, 4);
    assert.ok(Number(rows[3]?.id) > Math.max(...errorIds), 'the new error takes an id after the old ones');
  });

  it('still deletes the events of a deleted error (the reference survived the rebuild)', async () => {
    await database.handle.db
      .deleteFrom('error_tracking_errors')
      .where('id', '=', errorIds[1] as number)
      .execute();
    assert.deepEqual(await eventsOf(errorIds[1] as number), []);
    assert.deepEqual(await eventsOf(errorIds[2] as number), ['e2']);
  });
});
