import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { renameTable } from '../helpers/database.js';
import type { TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

interface AuditEvent {
  id: number;
  event_name: string;
  author_id: number;
  details: Record<string, unknown>;
}

/**
 * The audit event queue (src/modules/audit/audit-queue.writer.ts): a shared commit's events are
 * stored as one queue row with the change and moved into `audit_events` later; every read writes
 * what is queued first.
 */
describe('audit event queue', () => {
  let t: TestApp;
  let owner: TestUser;

  before(async () => {
    ({ t, owner } = await appWithUsers(['owner']));
  });
  after(() => t.close());

  const createTokens = async (prefix: string, n: number): Promise<number[]> => {
    const created = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        t.api('POST', '/user/personal_access_tokens', { token: owner.token, body: { name: `${prefix}-${i}`, scopes: ['read_api'] } }),
      ),
    );
    return created.map((res) => (assert.equal(res.statusCode, 201, res.body), res.json<{ id: number }>().id));
  };
  const db = () => t.database.handle.db;
  const queuedRows = async () => (await db().selectFrom('audit_event_queue').select('id').execute()).length;
  const writtenFor = async (ids: number[]) =>
    (
      await db()
        .selectFrom('audit_events')
        .select(['target_id', 'event_name'])
        .where('event_name', '=', 'personal_access_token_created')
        .execute()
    )
      .map((row) => Number(row.target_id))
      .filter((id) => ids.includes(id));
  const tokenEvents = async (api: TestApp, ids: number[]) => {
    const res = await api.api('GET', '/audit_events', {
      query: { per_page: '100', entity_type: 'User', entity_id: String(owner.user.id) },
    });
    assert.equal(res.statusCode, 200, res.body);
    return res
      .json<AuditEvent[]>()
      .filter((e) => e.event_name === 'personal_access_token_created' && ids.includes(e.details.target_id as number));
  };

  it('stores a shared commit’s events with the change as queue rows, and a read from either of two instances writes each once', async () => {
    await t.app.modules.audit.writer.stop();
    const second = await createTestApp({ sameDatabaseAs: t });
    await second.app.modules.audit.writer.stop();
    try {
      const ids = await createTokens('queued', 8);
      assert.ok((await queuedRows()) >= 1, 'queued with the tokens');
      if (t.app.platform.database.dialect === 'sqlite') assert.ok((await queuedRows()) < 8, 'one row per shared commit, not per event');
      assert.deepEqual(await writtenFor(ids), [], 'not in audit_events before anything writes them');
      const metrics = await t.app.inject({ method: 'GET', url: '/-/metrics', remoteAddress: '127.0.0.1' });
      const gauge = metrics.body.split('\n').find((line) => line.startsWith('basalt_audit_event_queue_rows '));
      assert.equal(gauge, `basalt_audit_event_queue_rows ${await queuedRows()}`, 'the queue shows on /-/metrics');

      // Both instances read at once: every committed event is in both lists, and written once.
      // (Two SQLite instances in one process take turns: a connection waiting for the other's
      // write lock blocks the thread the other needs to commit. SQLite serves from one process.)
      const [first, other] =
        t.app.platform.database.dialect === 'postgres'
          ? await Promise.all([tokenEvents(second, ids), tokenEvents(t, ids)])
          : [await tokenEvents(second, ids), await tokenEvents(t, ids)];
      assert.equal(first.length, 8);
      assert.equal(other.length, 8);
      assert.deepEqual(
        (await writtenFor(ids)).sort((a, b) => a - b),
        [...ids].sort((a, b) => a - b),
        'each event once',
      );
      assert.equal(await queuedRows(), 0, 'nothing left queued');
      for (const event of first) assert.equal(event.author_id, owner.user.id);
    } finally {
      await second.close();
      t.app.modules.audit.writer.start();
    }
  });

  it('a write that fails leaves the events queued; the next read writes each once', async () => {
    await t.app.modules.audit.writer.stop();
    try {
      const ids = await createTokens('failing', 3);
      await renameTable(t.database, 'audit_events', 'audit_events_away');
      try {
        const refused = await t.api('GET', '/audit_events');
        assert.equal(refused.statusCode, 500, 'the read cannot write the queue, so it fails rather than show a partial trail');
      } finally {
        await renameTable(t.database, 'audit_events_away', 'audit_events');
      }
      assert.ok((await queuedRows()) >= 1, 'the failed write rolled back: the events are still queued');
      assert.equal((await tokenEvents(t, ids)).length, 3);
      assert.equal((await writtenFor(ids)).length, 3, 'each once');
    } finally {
      t.app.modules.audit.writer.start();
    }
  });

  it('the writer moves the queue into audit_events by itself while the process is quiet', async () => {
    const ids = await createTokens('background', 4);
    // The writer looks once a second; nothing reads the trail here.
    for (let waited = 0; waited < 10_000 && (await writtenFor(ids)).length < 4; waited += 100) await sleep(100);
    assert.equal((await writtenFor(ids)).length, 4);
    assert.equal(await queuedRows(), 0);
  });

  it('a server that closes writes what it queued first', async () => {
    const second = await createTestApp({ sameDatabaseAs: t });
    let closed = false;
    try {
      const created = await second.api('POST', '/user/personal_access_tokens', {
        token: owner.token,
        body: { name: 'closing', scopes: ['read_api'] },
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json<{ id: number }>().id;
      await second.close();
      closed = true;
      assert.deepEqual(await writtenFor([id]), [id], 'written by the closing server');
      assert.equal(await queuedRows(), 0);
    } finally {
      if (!closed) await second.close();
    }
  });

  it('a queue row that does not decode is left for an operator, and the trail still reads', async () => {
    await db().insertInto('audit_event_queue').values({ events: 'not deflated JSON' }).execute();
    const ids = await createTokens('beside-damage', 2);
    assert.equal((await tokenEvents(t, ids)).length, 2, 'the good rows are written');
    const left = await db().selectFrom('audit_event_queue').select('events').execute();
    assert.deepEqual(
      left.map((row) => row.events),
      ['not deflated JSON'],
    );
    await db().deleteFrom('audit_event_queue').execute();
  });
});
