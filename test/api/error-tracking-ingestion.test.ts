import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import {
  envelope,
  envelopePath,
  exceptionEvent,
  hex32,
  post,
  sentryAuth,
  storePath,
  type TrackedProject,
  trackedProject,
} from '../helpers/sentry.js';
import { sdkRequests } from '../helpers/sentry-fixtures.js';
import { appWithUsers } from '../helpers/suite.js';

interface ErrorJson {
  id: number;
  title: string;
  type: string;
  message: string;
  culprit: string;
  platform: string;
  status: string;
  count: number;
  user_count: number;
  first_seen: string;
  last_seen: string;
}

describe('error tracking ingestion and grouping', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'])));
  after(() => t.close());

  const fresh = async (): Promise<TrackedProject> => trackedProject(t, owner);
  const store = (p: TrackedProject, event: Record<string, unknown>) =>
    post(t, storePath(p.projectId), JSON.stringify(event), { 'x-sentry-auth': sentryAuth(p.key) });
  const errorsOf = async (p: TrackedProject, query = ''): Promise<ErrorJson[]> => {
    const res = await t.api('GET', `/projects/${p.projectId}/error_tracking/errors${query}`, { token: owner.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<ErrorJson[]>();
  };

  it('groups by exception type and top in-app frame, not by message or line number', async () => {
    const p = await fresh();
    for (const [value, lineno] of [
      ['division by zero', 42],
      ['float division by zero', 43],
    ] as const) {
      assert.equal((await store(p, exceptionEvent({ value, lineno }))).statusCode, 200);
    }
    await store(p, exceptionEvent({ fn: 'average' }));
    await store(p, exceptionEvent({ type: 'ValueError' }));
    const errors = await errorsOf(p, '?sort=frequency');
    assert.equal(errors.length, 3);
    assert.equal(errors[0]?.count, 2);
    assert.equal(errors[0]?.title, 'ZeroDivisionError: float division by zero', 'the title follows the latest event');
    assert.equal(errors[0]?.culprit, 'compute (app.views)');
    assert.equal(errors[0]?.platform, 'python');
  });

  it('uses the SDK fingerprint, expanding {{ default }}', async () => {
    const p = await fresh();
    await store(p, exceptionEvent({ type: 'TimeoutError', fingerprint: ['database-unavailable'] }));
    await store(p, exceptionEvent({ type: 'ConnectionError', fn: 'other', fingerprint: ['database-unavailable'] }));
    await store(p, exceptionEvent({ fingerprint: ['{{ default }}', 'tenant-a'] }));
    await store(p, exceptionEvent({ fingerprint: ['{{default}}', 'tenant-b'] }));
    await store(p, exceptionEvent({ fingerprint: ['{{ default }}', 'tenant-b'] }));
    const errors = await errorsOf(p, '?sort=frequency');
    assert.deepEqual(
      errors.map((e) => e.count),
      [2, 2, 1],
    );
  });

  it('groups message events by template; a captureMessage synthetic exception is a message', async () => {
    const p = await fresh();
    for (const user of ['ann', 'bob']) {
      await store(p, {
        message: { message: 'Login failed for %s', params: [user], formatted: `Login failed for ${user}` },
        platform: 'python',
      });
    }
    await store(p, {
      message: 'Disk almost full',
      exception: { values: [{ value: 'Disk almost full', mechanism: { type: 'generic', synthetic: true } }] },
      platform: 'javascript',
    });
    await store(p, { logentry: { message: 'Disk almost full' }, platform: 'javascript' });
    const errors = await errorsOf(p, '?sort=frequency');
    assert.equal(errors.length, 2);
    assert.deepEqual(errors.map((e) => [e.title, e.count]).sort(), [
      ['Disk almost full', 2],
      ['Login failed for bob', 2],
    ]);
  });

  it('counts users by id, username, e-mail or IP, in that order', async () => {
    const p = await fresh();
    const users = [
      { id: '1', email: 'one@example.com' },
      { id: '1', username: 'someone-else' },
      { username: 'two' },
      { email: 'Three@Example.com' },
      { email: 'three@example.com' },
      { ip_address: '198.51.100.4' },
      undefined,
    ];
    for (const user of users) await store(p, exceptionEvent(user ? { user } : {}));
    const [error] = await errorsOf(p);
    assert.equal(error?.count, 7);
    assert.equal(error?.user_count, 4);
    const events = await t.api('GET', `/projects/${p.projectId}/error_tracking/errors/${error?.id}/events?per_page=100`, {
      token: owner.token,
    });
    const identifiers = events.json().map((e: { user: string | null }) => e.user);
    assert.ok(identifiers.includes('id:1'));
    assert.ok(identifiers.includes('email:three@example.com'));
    assert.ok(identifiers.includes(null));
  });

  it('two identical events at once make one error with a count of 2', async () => {
    const p = await fresh();
    const results = await Promise.all([
      store(p, exceptionEvent({})),
      store(p, exceptionEvent({})),
      store(p, exceptionEvent({ type: 'Other' })),
    ]);
    assert.deepEqual(
      results.map((r) => r.statusCode),
      [200, 200, 200],
    );
    const errors = await errorsOf(p, '?sort=frequency');
    assert.deepEqual(
      errors.map((e) => e.count),
      [2, 1],
    );
  });

  it('an event id sent twice (an SDK retry) is stored and counted once', async () => {
    const p = await fresh();
    const event = exceptionEvent({ eventId: hex32(77) });
    assert.deepEqual((await store(p, event)).json(), { id: hex32(77) });
    const again = await store(p, event);
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), { id: hex32(77) });
    assert.equal((await errorsOf(p))[0]?.count, 1);
  });

  it('a retried event without a usable timestamp is stored once too; another event of the error with the same id and another time is kept', async () => {
    const p = await fresh();
    const untimed = { ...exceptionEvent({ eventId: hex32(78) }), timestamp: 'not a time' };
    assert.equal((await store(p, untimed)).statusCode, 200);
    t.manual?.advance(5);
    assert.equal((await store(p, untimed)).statusCode, 200, 'the retry arrives later: another receive time');
    assert.equal((await errorsOf(p))[0]?.count, 1);
    const at = (seconds: number) => exceptionEvent({ eventId: hex32(79), timestamp: 1_700_000_000 + seconds });
    await store(p, at(1));
    await store(p, at(1));
    await store(p, at(2));
    // One error: the untimed event once, the timed id once at 1 s and once at 2 s.
    assert.deepEqual(
      (await errorsOf(p)).map((e) => e.count),
      [3],
    );
  });

  it('a new event reopens a resolved error; an ignored error stays ignored', async () => {
    const p = await fresh();
    await store(p, exceptionEvent({}));
    await store(p, exceptionEvent({ type: 'Ignored' }));
    const [a, b] = (await errorsOf(p)).sort((x, y) => x.id - y.id);
    const url = (id: number | undefined) => `/projects/${p.projectId}/error_tracking/errors/${id}`;
    assert.equal((await t.api('PUT', url(a?.id), { token: owner.token, body: { status: 'resolved' } })).json().status, 'resolved');
    assert.equal((await t.api('PUT', url(b?.id), { token: owner.token, body: { status: 'ignored' } })).json().status, 'ignored');
    assert.equal((await errorsOf(p, '?status=unresolved')).length, 0);
    await store(p, exceptionEvent({}));
    await store(p, exceptionEvent({ type: 'Ignored' }));
    const after = await t.api('GET', url(a?.id), { token: owner.token });
    assert.equal(after.json().status, 'unresolved');
    assert.equal(after.json().count, 2);
    assert.equal((await t.api('GET', url(b?.id), { token: owner.token })).json().status, 'ignored');
  });

  it('keeps first and last seen from event timestamps (seconds or RFC 3339) and each event’s fields', async () => {
    const p = await fresh();
    const t1 = Date.UTC(2026, 0, 1, 10, 0, 0) / 1000;
    const t2 = '2026-01-02T12:30:00.500Z';
    await store(p, exceptionEvent({ timestamp: t1, release: 'web@1.0', environment: 'production' }));
    await store(p, exceptionEvent({ timestamp: t2, release: 'web@1.1', environment: 'staging' }));
    const [error] = await errorsOf(p);
    assert.equal(error?.first_seen, '2026-01-01T10:00:00.000Z');
    assert.equal(error?.last_seen, '2026-01-02T12:30:00.500Z');
    const events = (
      await t.api('GET', `/projects/${p.projectId}/error_tracking/errors/${error?.id}/events`, { token: owner.token })
    ).json();
    assert.equal(events.length, 2);
    assert.equal(events[0].release, 'web@1.1');
    assert.equal(events[0].environment, 'staging');
    assert.equal(events[0].level, 'error');
    assert.equal(events[0].occurred_at, '2026-01-02T12:30:00.500Z');
    assert.equal(events[0].payload.exception.values[0].type, 'ZeroDivisionError');
  });

  it('envelopes: items with and without length, empty lines, dropped and unknown types, sessions counted', async () => {
    const p = await fresh();
    const now = new Date().toISOString();
    // Built once: its timestamp (now) must be the same text in the item and in its length.
    const event = JSON.stringify(exceptionEvent({}));
    const session = (status: string, init: boolean, errors = 0) => ({
      sid: 'x',
      init,
      started: now,
      status,
      errors,
      attrs: { release: 'app@1.0', environment: 'production' },
    });
    const text = [
      JSON.stringify({ event_id: hex32(500), sent_at: now }),
      '{"type":"session"}',
      JSON.stringify(session('ok', true)),
      '',
      '{"type":"transaction"}',
      JSON.stringify({ type: 'transaction', spans: [] }),
      '{"type":"attachment","length":5,"filename":"a.txt"}',
      'ab\ncd',
      '{"type":"check_in"}',
      '{"check_in_id":"c","status":"ok"}',
      '{"type":"future_item_type"}',
      '{"anything": true}',
      `{"type":"event","length":${Buffer.byteLength(event)}}`,
      event,
      '',
      '',
    ].join('\n');
    const res = await post(t, envelopePath(p.projectId), text, { 'x-sentry-auth': sentryAuth(p.key) });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { id: hex32(500) });
    assert.equal((await errorsOf(p))[0]?.count, 1);

    const sessions = envelope({}, [
      { type: 'session', payload: session('exited', false) },
      { type: 'session', payload: session('crashed', false, 1) },
      { type: 'sessions', payload: { aggregates: [{ started: now, exited: 5, errored: 2, crashed: 1 }], attrs: { release: 'app@1.0' } } },
      { type: 'session', payload: { ...session('ok', true), attrs: { release: 'app@2.0', environment: 'production' } } },
    ]);
    const onlySessions = await post(t, envelopePath(p.projectId), sessions, { 'x-sentry-auth': sentryAuth(p.key) });
    assert.equal(onlySessions.statusCode, 200, onlySessions.body);
    const health = await t.api('GET', `/projects/${p.projectId}/error_tracking/release_health`, { token: owner.token });
    const byRelease = Object.fromEntries(health.json().map((r: { release: string }) => [r.release, r]));
    assert.deepEqual(byRelease['app@1.0'], {
      release: 'app@1.0',
      environment: 'production',
      sessions: 9,
      exited: 6,
      errored: 2,
      crashed: 2,
      abnormal: 0,
      crash_free_rate: 1 - 2 / 9,
    });
    assert.equal(byRelease['app@2.0'].sessions, 1);
    assert.equal((await errorsOf(p))[0]?.count, 1, 'session items create no errors');
  });

  it('an envelope with two event items is malformed', async () => {
    const p = await fresh();
    const body = envelope({}, [
      { type: 'event', payload: exceptionEvent({}) },
      { type: 'event', payload: exceptionEvent({}) },
    ]);
    const res = await post(t, envelopePath(p.projectId), body, { 'x-sentry-auth': sentryAuth(p.key) });
    assert.equal(res.statusCode, 400);
    assert.equal((await errorsOf(p)).length, 0, 'nothing of a refused envelope is stored');
  });

  it('stores NUL characters safely (scrubbed)', async () => {
    const p = await fresh();
    const res = await store(p, exceptionEvent({ value: 'bad\u0000byte', user: { id: 'nul\u0000user' } }));
    assert.equal(res.statusCode, 200, res.body);
    const [error] = await errorsOf(p);
    assert.equal(error?.message, 'badbyte');
  });

  it('every SDK style of the ingestion table is accepted and grouped', async () => {
    const p = await fresh();
    for (const request of sdkRequests(p.key)) {
      const path = `/errortracking/api/v1/projects/api/${p.projectId}/${request.endpoint}/${request.query ?? ''}`;
      const res = await post(t, path, request.body, request.headers);
      assert.equal(res.statusCode, 200, `${request.sdk}: ${res.body}`);
      assert.match(res.json().id, /^[0-9a-f]{32}$/, request.sdk);
    }
    const errors = await errorsOf(p, '?per_page=100');
    const titles = errors.map((e) => e.title).sort();
    assert.deepEqual(
      titles,
      sdkRequests(p.key)
        .map((r) => r.expect.title)
        .sort(),
    );
    const ruby = errors.find((e) => e.platform === 'ruby');
    assert.equal(ruby?.culprit, 'OrdersController#create', 'the transaction names the culprit');
    const health = (await t.api('GET', `/projects/${p.projectId}/error_tracking/release_health`, { token: owner.token })).json();
    assert.deepEqual(health.map((r: { release: string }) => r.release).sort(), ['py-app@2.0.0', 'rs-app@0.3.1']);
    const rust = health.find((r: { release: string }) => r.release === 'rs-app@0.3.1');
    assert.equal(rust.crashed, 1);
  });
});

describe('the collector answers browsers on any origin (CORS)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('a preflight is 204 with the methods and Sentry headers allowed; answers and refusals carry the origin rule', async () => {
    const owner = await createUser(t.app);
    const { projectId, key } = await trackedProject(t, owner);
    for (const url of [envelopePath(projectId), storePath(projectId)]) {
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://shop.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-sentry-auth',
        },
      });
      assert.equal(preflight.statusCode, 204, url);
      assert.equal(preflight.headers['access-control-allow-origin'], '*');
      assert.match(String(preflight.headers['access-control-allow-methods']), /POST/);
      assert.match(String(preflight.headers['access-control-allow-headers']), /x-sentry-auth/);
    }
    const stored = await post(t, storePath(projectId), JSON.stringify(exceptionEvent({})), {
      'x-sentry-auth': sentryAuth(key),
      origin: 'https://shop.example',
    });
    assert.equal(stored.statusCode, 200);
    assert.equal(stored.headers['access-control-allow-origin'], '*');
    assert.match(String(stored.headers['access-control-expose-headers']), /x-sentry-rate-limits/);
    const refused = await post(t, storePath(projectId), '{}', { 'x-sentry-auth': sentryAuth('bset_0000'), origin: 'https://shop.example' });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['access-control-allow-origin'], '*');
  });
});

describe('hostile nesting in events', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('an event nested deeper than 100 levels is 400 on both endpoints and nothing is stored', async () => {
    const owner = await createUser(t.app);
    const { projectId, key } = await trackedProject(t, owner);
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const event = `{"event_id":"${hex32(7)}","exception":{"values":[{"type":"Deep","value":"x"}]},"extra":{"nest":${deep}}}`;
    const store = await post(t, storePath(projectId), event, { 'x-sentry-auth': sentryAuth(key) });
    assert.equal(store.statusCode, 400);
    assert.match(store.json<{ message: string }>().message, /deeper than 100/);
    const body = `${JSON.stringify({ event_id: hex32(7) })}\n${JSON.stringify({ type: 'event' })}\n${event}\n`;
    const env = await post(t, envelopePath(projectId), body, { 'x-sentry-auth': sentryAuth(key) });
    assert.equal(env.statusCode, 400);
    const errors = await t.api('GET', `/projects/${projectId}/error_tracking/errors`);
    assert.deepEqual(errors.json(), []);
  });
});
