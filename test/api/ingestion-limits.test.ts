import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createIntegration, notify, pathOf, settle, type CreatedIntegration } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import {
  enableTracking,
  envelope,
  envelopePath,
  exceptionEvent,
  hex32,
  sentryAuth,
  storePath,
  type TrackedProject,
  trackedProject,
} from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

/** An envelope with one new event, sent from `address` with the project's key. */
function sendEvent(t: TestApp, p: TrackedProject, address: string, event = exceptionEvent({})): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: envelopePath(p.projectId),
    headers: { 'x-sentry-auth': sentryAuth(p.key) },
    remoteAddress: address,
    payload: envelope({}, [{ type: 'event', payload: event }]),
  });
}

function sendAlert(t: TestApp, integration: CreatedIntegration, address: string, title: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: pathOf(integration.url),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${integration.token}` },
    remoteAddress: address,
    payload: JSON.stringify({ title }),
  });
}

/** Sends until the first refusal; the number of accepted requests before it. */
async function acceptedBeforeRefusal(send: () => Promise<LightMyRequestResponse>, burst: number) {
  for (let i = 0; i < burst; i += 1) {
    const res = await send();
    if (res.statusCode === 429) return { accepted: i, refusal: res };
    assert.equal(res.statusCode, 200, res.body);
  }
  return { accepted: burst, refusal: undefined };
}

describe('ingestion limits: defaults', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => {
    t = await createTestApp();
    await settle(t);
    owner = await createUser(t.app);
  });
  after(() => t.close());

  const errorCount = async (projectId: number) => {
    const errors = (await t.api('GET', `/projects/${projectId}/error_tracking/errors`, { token: owner.token })).json<{ count: number }[]>();
    return errors.reduce((sum, e) => sum + e.count, 0);
  };

  it('the collector answers 429 with Retry-After and X-Sentry-Rate-Limits within a burst of 60 from one address to one key; another address is not affected', async () => {
    const p = await trackedProject(t, owner);
    const { accepted, refusal } = await acceptedBeforeRefusal(() => sendEvent(t, p, '203.0.113.7'), 60);
    assert.ok(refusal, 'a burst of 60 meets a 429');
    assert.ok(Number(refusal.headers['retry-after']) >= 1);
    assert.match(String(refusal.headers['x-sentry-rate-limits']), /^\d+::key$/);
    assert.equal(refusal.headers['ratelimit-name'], 'throttle_collector');
    assert.equal((await sendEvent(t, p, '203.0.113.8')).statusCode, 200, 'another address still sends');
    assert.equal(await errorCount(p.projectId), accepted + 1, 'a refused event is not stored');
  });

  it('the alert receiver answers 429 with Retry-After within a burst of 60 from one address to one integration', async () => {
    const project = await createProject(t.app, owner);
    const integration = await createIntegration(t, project.id, { name: 'limited' });
    let n = 0;
    const { refusal } = await acceptedBeforeRefusal(() => sendAlert(t, integration, '203.0.113.9', `alert ${(n += 1)}`), 60);
    assert.ok(refusal, 'a burst of 60 meets a 429');
    assert.ok(Number(refusal.headers['retry-after']) >= 1);
    assert.equal(refusal.headers['ratelimit-name'], 'throttle_alerts');
    assert.equal((await sendAlert(t, integration, '203.0.113.10', 'elsewhere')).statusCode, 200, 'another address still sends');
  });
});

describe('ingestion limits: RATE_LIMITS replaces the defaults', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => {
    t = await createTestApp({
      env: { RATE_LIMITS: 'collector=3/m,collector_project=5/m,alerts=2/m,alerts_project=3/m' },
    });
    await settle(t);
    owner = await createUser(t.app);
  });
  after(() => t.close());

  it('the collector: the configured per-address limit, then the per-project ceiling over every address', async () => {
    const p = await trackedProject(t, owner);
    for (let i = 0; i < 3; i += 1) assert.equal((await sendEvent(t, p, '198.51.100.1')).statusCode, 200);
    const own = await sendEvent(t, p, '198.51.100.1');
    assert.equal(own.statusCode, 429, 'collector=3/m replaces the default of 25');
    assert.match(String(own.headers['x-sentry-rate-limits']), /^\d+::key$/);
    for (let i = 0; i < 2; i += 1)
      assert.equal((await sendEvent(t, p, '198.51.100.2')).statusCode, 200, 'another address sends up to the ceiling');
    const ceiling = await sendEvent(t, p, '198.51.100.3');
    assert.equal(ceiling.statusCode, 429);
    assert.equal(ceiling.headers['ratelimit-name'], 'throttle_collector_project');
    assert.match(String(ceiling.headers['x-sentry-rate-limits']), /^\d+::project$/);
    const other = await trackedProject(t, owner);
    assert.equal((await sendEvent(t, other, '198.51.100.3')).statusCode, 200, 'the ceiling is per project');
    t.manual?.advance(60_000);
    assert.equal((await sendEvent(t, p, '198.51.100.1')).statusCode, 200, 'a new window admits again');
  });

  it('the alert receiver: the configured per-address limit, then the per-project ceiling', async () => {
    const project = await createProject(t.app, owner);
    const integration = await createIntegration(t, project.id, { name: 'configured' });
    assert.equal((await sendAlert(t, integration, '198.51.100.4', 'a')).statusCode, 200);
    assert.equal((await sendAlert(t, integration, '198.51.100.4', 'b')).statusCode, 200);
    const own = await sendAlert(t, integration, '198.51.100.4', 'c');
    assert.equal(own.statusCode, 429);
    assert.ok(Number(own.headers['retry-after']) >= 1);
    assert.equal((await sendAlert(t, integration, '198.51.100.5', 'd')).statusCode, 200, 'another address is not affected');
    const ceiling = await sendAlert(t, integration, '198.51.100.6', 'e');
    assert.equal(ceiling.statusCode, 429);
    assert.equal(ceiling.headers['ratelimit-name'], 'throttle_alerts_project');
  });
});

describe('stored events are bounded', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'], { env: { RATE_LIMITS: '', ERROR_TRACKING_MAX_EVENTS: '3' } })));
  after(() => t.close());

  const latestEvent = async (projectId: number) => {
    const [error] = (await t.api('GET', `/projects/${projectId}/error_tracking/errors`, { token: owner.token })).json<{ id: number }[]>();
    assert.ok(error);
    const events = await t.api('GET', `/projects/${projectId}/error_tracking/errors/${error.id}/events`, { token: owner.token });
    const details = await t.api('GET', `/projects/${projectId}/error_tracking/errors/${error.id}`, { token: owner.token });
    return { payload: events.json()[0].payload, details: details.json() };
  };

  it('an oversized event is stored trimmed: the last 100 breadcrumbs, the first 50 and last 200 frames, extra within its bounds', async () => {
    const p = await trackedProject(t, owner);
    const frames = Array.from({ length: 300 }, (_, i) => ({ function: `f${i}`, filename: 'app.py', lineno: i }));
    let deep: Record<string, unknown> = { bottom: true };
    for (let i = 0; i < 20; i += 1) deep = { level: deep };
    const event = {
      ...exceptionEvent({}),
      exception: { values: [{ type: 'RecursionError', value: 'too deep', stacktrace: { frames } }] },
      breadcrumbs: { values: Array.from({ length: 150 }, (_, i) => ({ message: `crumb ${i}`, category: 'log' })) },
      extra: {
        small: 'kept',
        long: 'x'.repeat(5000),
        deep,
        many: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key${i}`, `value ${i}`])),
      },
    };
    assert.equal((await sendEvent(t, p, '192.0.2.1', event)).statusCode, 200);

    const { payload, details } = await latestEvent(p.projectId);
    const crumbs = payload.breadcrumbs.values as { message: string }[];
    assert.equal(crumbs.length, 100);
    assert.equal(crumbs[0]?.message, 'crumb 50');
    assert.equal(crumbs[99]?.message, 'crumb 149', 'the most recent breadcrumbs are kept');
    const trace = payload.exception.values[0].stacktrace;
    assert.equal(trace.frames.length, 250);
    assert.equal(trace.frames[0].function, 'f0');
    assert.equal(trace.frames[49].function, 'f49');
    assert.equal(trace.frames[50].function, 'f100');
    assert.equal(trace.frames[249].function, 'f299', 'the frame that raised is kept');
    assert.deepEqual(trace.frames_omitted, [50, 100]);
    assert.equal(details.stack_trace.frames[0].function, 'f299', 'the error shows the trimmed stack');
    assert.equal(payload.extra.small, 'kept');
    assert.ok(payload.extra.long.length <= 1024 && payload.extra.long.endsWith('...'));
    assert.ok(!JSON.stringify(payload.extra.deep).includes('bottom'), 'nesting past the bound is cut');
    assert.ok(JSON.stringify(payload.extra).length <= 20_000, 'extra stays within its size budget');
    assert.ok(Object.keys(payload.extra.many ?? {}).length < 5000);
  });

  it('a small event is stored as sent', async () => {
    const p = await trackedProject(t, owner);
    const event = { ...exceptionEvent({}), breadcrumbs: [{ message: 'one' }], extra: { a: [1, 2, { b: 'c' }] } };
    assert.equal((await sendEvent(t, p, '192.0.2.1', event)).statusCode, 200);
    const { payload } = await latestEvent(p.projectId);
    assert.deepEqual(payload.breadcrumbs, [{ message: 'one' }]);
    assert.deepEqual(payload.extra, { a: [1, 2, { b: 'c' }] });
  });

  it('past ERROR_TRACKING_MAX_EVENTS the collector answers 429 with X-Sentry-Rate-Limits and stores nothing', async () => {
    const p = await trackedProject(t, owner);
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await sendEvent(t, p, '192.0.2.2', exceptionEvent({ eventId: hex32(i + 1), type: `E${i}` }))).statusCode, 200);
    }
    const full = await sendEvent(t, p, '192.0.2.3', exceptionEvent({ eventId: hex32(9), type: 'Another' }));
    assert.equal(full.statusCode, 429);
    assert.ok(Number(full.headers['retry-after']) >= 1);
    assert.match(String(full.headers['x-sentry-rate-limits']), /^\d+::project$/);
    const store = await t.app.inject({
      method: 'POST',
      url: storePath(p.projectId),
      headers: { 'x-sentry-auth': sentryAuth(p.key) },
      payload: JSON.stringify(exceptionEvent({ type: 'ByStore' })),
    });
    assert.equal(store.statusCode, 429, 'the store endpoint too');
    const errors = (await t.api('GET', `/projects/${p.projectId}/error_tracking/errors`, { token: owner.token })).json<
      { count: number }[]
    >();
    assert.equal(errors.length, 3, 'nothing was stored past the bound');
    const other = await trackedProject(t, owner);
    assert.equal((await sendEvent(t, other, '192.0.2.3')).statusCode, 200, 'the bound is per project');
  });
});

describe('the ingestion doors do not tell whether a private project exists', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => {
    t = await createTestApp({ env: { RATE_LIMITS: '' } });
    await settle(t);
    owner = await createUser(t.app);
  });
  after(() => t.close());

  const answer = (res: LightMyRequestResponse) => ({ status: res.statusCode, body: res.body });

  it('the collector answers a wrong key on an existing private project as it answers a project that does not exist', async () => {
    const tracked = await enableTracking(t, (await createProject(t.app, owner, { visibility: 'private' })).id, owner.token);
    const untracked = await createProject(t.app, owner, { visibility: 'private' });
    const body = envelope({}, [{ type: 'event', payload: exceptionEvent({}) }]);
    const send = (project: number | string, key: string) =>
      t.app.inject({ method: 'POST', url: envelopePath(project), headers: { 'x-sentry-auth': sentryAuth(key) }, payload: body });
    const missing = answer(await send(999_999, 'bset_guess'));
    assert.equal(missing.status, 401);
    assert.deepEqual(answer(await send(tracked.projectId, 'bset_guess')), missing, 'existing, wrong key');
    assert.deepEqual(answer(await send(untracked.id, 'bset_guess')), missing, 'existing, tracking off');
    assert.deepEqual(answer(await send(encodeURIComponent(`${owner.user.username}/no-such-project`), 'bset_guess')), missing, 'a path');
    assert.deepEqual(answer(await send(999_999, tracked.key)), missing, "another project's key");
  });

  it('the alert receiver answers a wrong key or endpoint on an existing private project as it answers a project that does not exist', async () => {
    const project = await createProject(t.app, owner, { visibility: 'private' });
    const http = await createIntegration(t, project.id, { name: 'private' });
    const missing = answer(
      await notify(t, http.url.replace(`/${project.path}/`, '/no-such-project-here/'), { title: 'x' }, { key: 'guess' }),
    );
    assert.equal(missing.status, 401);
    assert.deepEqual(answer(await notify(t, http.url, { title: 'x' }, { key: 'guess' })), missing, 'existing, wrong key');
    const unknownEndpoint = http.url.replace(http.endpoint_identifier, '0123456789abcdef');
    assert.deepEqual(answer(await notify(t, unknownEndpoint, { title: 'x' }, { key: 'guess' })), missing, 'existing, unknown endpoint');
    const prometheus = `/${owner.user.username}/${project.path}/prometheus/alerts/notify.json`;
    assert.deepEqual(
      answer(await notify(t, `http://x${prometheus}`, { alerts: [] }, { key: 'guess' })),
      missing,
      'no Prometheus integration',
    );
  });
});
