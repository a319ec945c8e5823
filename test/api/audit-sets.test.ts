import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditEntry, type AuditEntry } from '../../src/infra/audit.js';
import { AuditRepository, SET_SIZE } from '../../src/modules/audit/audit.repository.js';
import type { TestApp } from '../helpers/app.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

interface AuditEvent {
  id: number;
  event_name: string;
  author_id: number;
  entity_type: string;
  entity_id: number;
  created_at: string;
  details: Record<string, unknown>;
}

/**
 * How audit events are stored (src/modules/audit/audit.repository.ts): a transaction's events
 * about one entity in one `audit_event_sets` row, read back one by one by the API and the
 * `audit_events` view.
 */
describe('audit event sets', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;

  before(async () => {
    ({ t, owner, other } = await appWithUsers(['owner', 'other']));
  });
  after(() => t.close());

  const db = () => t.database.handle.db;
  const list = async (query: Record<string, string>): Promise<{ events: AuditEvent[]; total: number }> => {
    const res = await t.api('GET', '/audit_events', { query: { per_page: '100', ...query } });
    assert.equal(res.statusCode, 200, res.body);
    return { events: res.json<AuditEvent[]>(), total: Number(res.headers['x-total']) };
  };
  const createTokens = (user: TestUser, prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) =>
      t.api('POST', '/user/personal_access_tokens', { token: user.token, body: { name: `${prefix}-${i}`, scopes: ['read_api'] } }),
    );
  /** An entry about `entityId` (a made-up user) at `at`, its target `n`. */
  const entry = (entityId: number, n: number, at: number): AuditEntry =>
    auditEntry(
      { authorId: owner.user.id, authorName: owner.user.username, ipAddress: '192.0.2.1' },
      {
        entityType: 'User',
        entityId,
        entityPath: `entity-${entityId}`,
        targetType: 'Thing',
        targetId: n,
        targetDetails: `thing "${n}" ✓`,
        eventName: 'thing_happened',
        details: { n, scopes: ['api'] },
        at,
      },
    );
  const store = (entries: AuditEntry[]) =>
    db()
      .transaction()
      .execute((trx) => AuditRepository.store(trx, entries));

  it('stores a shared commit’s events with the change, one row per entity, each event listed once', async () => {
    const setsBefore = (await db().selectFrom('audit_event_sets').select('id').execute()).length;
    const created = await Promise.all([...createTokens(owner, 'mine', 6), ...createTokens(other, 'theirs', 6)]);
    const ids = created.map((res) => (assert.equal(res.statusCode, 201, res.body), res.json<{ id: number }>().id));
    const sets = (await db().selectFrom('audit_event_sets').select(['id', 'event_count']).execute()).length - setsBefore;
    if (t.app.platform.database.dialect === 'sqlite') assert.ok(sets < 12, `${sets} rows for 12 events: shared commits share rows`);

    for (const user of [owner, other]) {
      const { events } = await list({ entity_type: 'User', entity_id: String(user.user.id) });
      const tokens = events.filter((e) => e.event_name === 'personal_access_token_created' && ids.includes(e.details.target_id as number));
      assert.equal(tokens.length, 6, 'each of the user’s tokens once, none of the other’s');
      assert.ok(tokens.every((e) => e.author_id === user.user.id && e.entity_id === user.user.id));
    }
    // The view has the same events under the same ids.
    const viewed = await db().selectFrom('audit_events').selectAll().where('event_name', '=', 'personal_access_token_created').execute();
    const { events } = await list({});
    for (const row of viewed.filter((r) => ids.includes(Number(r.target_id)))) {
      const listed = events.find((e) => e.id === Number(row.id));
      assert.ok(listed, `event ${row.id} of the view is listed`);
      assert.equal(listed.details.target_id, Number(row.target_id));
      assert.equal(new Date(listed.created_at).getTime(), Number(row.created_at));
      assert.deepEqual((JSON.parse(row.details) as { scopes: string[] }).scopes, ['read_api']);
    }
    assert.equal(viewed.filter((r) => ids.includes(Number(r.target_id))).length, 12);
  });

  it('a transaction that rolls back stores none of its events', async () => {
    const count = async () =>
      (await db().selectFrom('audit_events').select('id').where('event_name', '=', 'thing_happened').execute()).length;
    const before = await count();
    await assert.rejects(
      db()
        .transaction()
        .execute(async (trx) => {
          await AuditRepository.store(trx, [entry(900_001, 1, t.clock.now())]);
          throw new Error('the change fails');
        }),
      /the change fails/,
    );
    assert.equal(await count(), before);
  });

  it('splits more than a row holds, and pages, counts and filters by time across rows as one list, newest first', async () => {
    const entity = 900_002;
    const start = t.clock.now() + 10_000;
    // 250 events in one transaction, one millisecond apart: three rows, the last with 50.
    await store(Array.from({ length: 250 }, (_, n) => entry(entity, n, start + n)));
    const rows = await db().selectFrom('audit_event_sets').select('event_count').where('entity_id', '=', entity).orderBy('id').execute();
    assert.deepEqual(
      rows.map((row) => Number(row.event_count)),
      [SET_SIZE, SET_SIZE, 50],
    );
    const filter = { entity_type: 'User', entity_id: String(entity) };
    const targets = (events: AuditEvent[]) => events.map((e) => e.details.target_id);

    const everything: AuditEvent[] = [];
    for (let page = 1; page <= 3; page += 1) everything.push(...(await list({ ...filter, page: String(page) })).events);
    assert.deepEqual(
      targets(everything),
      Array.from({ length: 250 }, (_, i) => 249 - i),
      'newest first, each once, across rows',
    );
    assert.equal((await list(filter)).total, 250);
    const seventh = await t.api('GET', '/audit_events', { query: { ...filter, per_page: '7', page: '15' } });
    assert.deepEqual(targets(seventh.json<AuditEvent[]>()), [151, 150, 149, 148, 147, 146, 145], 'a page straddling two rows');

    // A range whose ends fall inside rows: events 95 to 205.
    const range = { created_after: new Date(start + 95).toISOString(), created_before: new Date(start + 205).toISOString() };
    const inRange = await list({ ...filter, ...range });
    assert.equal(inRange.total, 111);
    assert.deepEqual(
      targets(inRange.events),
      Array.from({ length: 100 }, (_, i) => 205 - i),
    );
    const last = await list({ ...filter, ...range, page: '2' });
    assert.deepEqual(
      targets(last.events),
      Array.from({ length: 11 }, (_, i) => 105 - i),
    );
    const middle = await t.api('GET', '/audit_events', { query: { ...filter, ...range, per_page: '20', page: '6' } });
    assert.deepEqual(
      targets(middle.json<AuditEvent[]>()),
      Array.from({ length: 11 }, (_, i) => 105 - i),
    );

    // One event by its id, from the second row.
    const one = everything.find((e) => e.details.target_id === 120)!;
    const fetched = await t.api('GET', `/audit_events/${one.id}`);
    assert.equal(fetched.statusCode, 200);
    assert.deepEqual(fetched.json(), one);
    assert.equal(Math.floor(one.id / SET_SIZE) * SET_SIZE + 20, one.id, 'event 20 of its row');
  });

  it('a row that does not decode shows no events and the rest of the trail still reads', async () => {
    const entity = 900_003;
    await store([entry(entity, 1, t.clock.now())]);
    const damaged = await db()
      .insertInto('audit_event_sets')
      .values({
        entity_type: 'User',
        entity_id: entity,
        first_at: t.clock.now(),
        last_at: t.clock.now(),
        event_count: 1,
        events: 'not JSON',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await store([entry(entity, 2, t.clock.now())]);
    const { events } = await list({ entity_type: 'User', entity_id: String(entity) });
    assert.deepEqual(
      events.map((e) => e.details.target_id),
      [2, 1],
    );
    assert.equal((await t.api('GET', `/audit_events/${Number(damaged.id) * SET_SIZE}`)).statusCode, 404);
    await db().deleteFrom('audit_event_sets').where('id', '=', damaged.id).execute();
  });

  it('a user created later has their own rows: ids keep growing', async () => {
    const late = await createUser(t.app);
    const created = await Promise.all(createTokens(late, 'late', 2));
    for (const res of created) assert.equal(res.statusCode, 201);
    const { events } = await list({});
    const ids = events.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
      'the list is newest first by id',
    );
    assert.ok(events.slice(0, 3).some((e) => e.entity_id === late.user.id));
  });
});
