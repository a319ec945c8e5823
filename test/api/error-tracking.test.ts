import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bumpEpoch } from '../../src/infra/db/index.js';
import { randomBytes } from 'node:crypto';
import { deflateSync, brotliCompressSync, gzipSync } from 'node:zlib';
import type { TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import {
  enableTracking,
  envelope,
  envelopePath,
  exceptionEvent,
  gzip,
  hex32,
  post,
  sentryAuth,
  storePath,
  trackedProject,
} from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

describe('error tracking settings and client keys', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'])));
  after(() => t.close());

  it('GET before any setting is 404 Error Tracking Setting Not Found; PATCH too', async () => {
    const project = await createProject(t.app, owner);
    const get = await t.api('GET', `/projects/${project.id}/error_tracking/settings`, { token: owner.token });
    assert.equal(get.statusCode, 404);
    assert.deepEqual(get.json(), { message: '404 Error Tracking Setting Not Found' });
    const patch = await t.api('PATCH', `/projects/${project.id}/error_tracking/settings`, { token: owner.token, body: { active: true } });
    assert.equal(patch.statusCode, 404);
  });

  it('PUT creates the setting with external fields null and a client key; PATCH changes active', async () => {
    const project = await createProject(t.app, owner);
    const put = await t.api('PUT', `/projects/${project.id}/error_tracking/settings`, {
      token: owner.token,
      body: { active: true, integrated: true },
    });
    assert.equal(put.statusCode, 200);
    assert.deepEqual(put.json(), {
      active: true,
      project_name: null,
      tracker_external_url: null,
      api_url: null,
      integrated: true,
      email_notifications: true,
    });
    const keys = await t.api('GET', `/projects/${project.id}/error_tracking/client_keys`, { token: owner.token });
    assert.equal(keys.json().length, 1, 'enabling integrated tracking creates a key');

    const patch = await t.api('PATCH', `/projects/${project.id}/error_tracking/settings`, { token: owner.token, body: { active: false } });
    assert.equal(patch.statusCode, 200);
    assert.equal(patch.json().active, false);
    assert.equal(patch.json().integrated, true);
    const get = await t.api('GET', `/projects/${encodeURIComponent(project.full_path)}/error_tracking/settings`, { token: owner.token });
    assert.deepEqual(get.json(), {
      active: false,
      project_name: null,
      tracker_external_url: null,
      api_url: null,
      integrated: true,
      email_notifications: true,
    });
  });

  it('accepts active and integrated as query parameters with an empty JSON body (gitbeaker)', async () => {
    const project = await createProject(t.app, owner);
    const res = await t.app.inject({
      method: 'PUT',
      url: `/api/v4/projects/${project.id}/error_tracking/settings?active=true&integrated=true`,
      headers: { 'private-token': owner.token, 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().active, true);
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/api/v4/projects/${project.id}/error_tracking/settings?active=false`,
      headers: { 'private-token': owner.token },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(patch.json().active, false);
  });

  it('PUT names a missing attribute; a non-boolean is a validation error; active without integrated is refused', async () => {
    const project = await createProject(t.app, owner);
    const missing = await t.api('PUT', `/projects/${project.id}/error_tracking/settings`, { token: owner.token, body: { active: true } });
    assert.equal(missing.statusCode, 400);
    assert.deepEqual(missing.json(), { message: 'integrated is missing' });
    const both = await t.api('PUT', `/projects/${project.id}/error_tracking/settings`, { token: owner.token, body: {} });
    assert.deepEqual(both.json(), { message: 'active, integrated are missing' });
    const wrong = await t.api('PUT', `/projects/${project.id}/error_tracking/settings`, {
      token: owner.token,
      body: { active: 'maybe', integrated: true },
    });
    assert.equal(wrong.statusCode, 400);
    assert.ok(wrong.json().message.active);
    const external = await t.api('PUT', `/projects/${project.id}/error_tracking/settings`, {
      token: owner.token,
      body: { active: true, integrated: false },
    });
    assert.equal(external.statusCode, 400);
    assert.ok(external.json().message.integrated);
    const off = await t.api('PUT', `/projects/${project.id}/error_tracking/settings`, {
      token: owner.token,
      body: { active: false, integrated: false },
    });
    assert.equal(off.statusCode, 200);
    assert.deepEqual(off.json(), {
      active: false,
      project_name: null,
      tracker_external_url: null,
      api_url: null,
      integrated: false,
      email_notifications: true,
    });
  });

  it('needs Maintainer or Owner: Developer 403, stranger 404, anonymous 401, read_api token cannot write', async () => {
    const project = await createProject(t.app, owner);
    const developer = await createUser(t.app);
    const maintainer = await createUser(t.app);
    const stranger = await createUser(t.app);
    await addMember(t.app, 'project', project.id, developer, 30);
    await addMember(t.app, 'project', project.id, maintainer, 40);
    const url = `/projects/${project.id}/error_tracking/settings`;
    const body = { active: true, integrated: true };
    assert.equal((await t.api('PUT', url, { token: developer.token, body })).statusCode, 403);
    assert.equal((await t.api('PUT', url, { token: stranger.token, body })).statusCode, 404);
    assert.equal((await t.api('PUT', url, { token: null, body })).statusCode, 401);
    assert.equal((await t.api('PUT', url, { token: maintainer.token, body })).statusCode, 200);
    assert.equal((await t.api('GET', `/projects/${project.id}/error_tracking/client_keys`, { token: developer.token })).statusCode, 403);
    const readOnly = await createUser(t.app, { scopes: ['read_api'] });
    await addMember(t.app, 'project', project.id, readOnly, 40);
    const denied = await t.api('POST', `/projects/${project.id}/error_tracking/client_keys`, { token: readOnly.token });
    assert.equal(denied.statusCode, 403);
    assert.equal(denied.json().error, 'insufficient_scope');
  });

  it('client keys: generated public key, DSN from EXTERNAL_URL, rotation, deleted and inactive keys refused', async () => {
    const project = await createProject(t.app, owner);
    const tracked = await enableTracking(t, project.id, owner.token);
    assert.match(tracked.key, /^\w+$/);
    assert.equal(tracked.dsn, `http://${tracked.key}@basalt.test/errortracking/api/v1/projects/${project.id}`);

    const event = JSON.stringify(exceptionEvent({}));
    const ok = await post(t, storePath(project.id), event, { 'x-sentry-auth': sentryAuth(tracked.key) });
    assert.equal(ok.statusCode, 200, ok.body);

    // Rotation (SPEC): create a new key, list to confirm it, delete the old one by id.
    const created = await t.api('POST', `/projects/${project.id}/error_tracking/client_keys`, { token: owner.token });
    assert.equal(created.statusCode, 201);
    const fresh = created.json<{ id: number; active: boolean; public_key: string; tracker_dsn: string }>();
    assert.equal(fresh.active, true);
    assert.notEqual(fresh.public_key, tracked.key);
    assert.equal(fresh.tracker_dsn, `http://${fresh.public_key}@basalt.test/errortracking/api/v1/projects/${project.id}`);
    const listed = await t.api('GET', `/projects/${project.id}/error_tracking/client_keys`, { token: owner.token });
    assert.deepEqual(
      listed.json().map((k: { id: number }) => k.id),
      [tracked.keyId, fresh.id],
    );
    assert.equal(listed.headers['x-total'], '2');
    const removed = await t.api('DELETE', `/projects/${project.id}/error_tracking/client_keys/${tracked.keyId}`, { token: owner.token });
    assert.equal(removed.statusCode, 200);
    assert.equal(removed.json().public_key, tracked.key);
    const again = await t.api('DELETE', `/projects/${project.id}/error_tracking/client_keys/${tracked.keyId}`, { token: owner.token });
    assert.equal(again.statusCode, 404);
    assert.equal((await t.api('DELETE', `/projects/${project.id}/error_tracking/client_keys/abc`, { token: owner.token })).statusCode, 400);

    const old = await post(t, storePath(project.id), event, { 'x-sentry-auth': sentryAuth(tracked.key) });
    assert.equal(old.statusCode, 401);
    const withNew = await post(t, storePath(project.id), event, { 'x-sentry-auth': sentryAuth(fresh.public_key) });
    assert.equal(withNew.statusCode, 200);

    // An inactive key (deactivated in the database: the API has no deactivate call) is refused.
    // A write to keys bumps the error-tracking cache epoch, as the repository's writes do.
    await t.app.platform.db.transaction().execute(async (trx) => {
      await trx.updateTable('error_tracking_client_keys').set({ active: 0 }).where('id', '=', fresh.id).execute();
      await bumpEpoch(trx, 'error-tracking');
    });
    const inactive = await post(t, `${storePath(project.id)}?sentry_key=${fresh.public_key}`, event);
    assert.equal(inactive.statusCode, 401);
  });

  it('removing a project removes its settings, keys, errors and events', async () => {
    const project = await createProject(t.app, owner);
    const tracked = await enableTracking(t, project.id, owner.token);
    const sent = await post(t, storePath(project.id), JSON.stringify(exceptionEvent({})), { 'x-sentry-auth': sentryAuth(tracked.key) });
    assert.equal(sent.statusCode, 200);
    assert.equal((await t.api('DELETE', `/projects/${project.id}`, { token: owner.token })).statusCode, 202);
    await t.app.platform.jobs.drain();
    const db = t.app.platform.db;
    for (const table of [
      'error_tracking_settings',
      'error_tracking_client_keys',
      'error_tracking_errors',
      'error_tracking_error_events',
    ] as const) {
      const left = await db.selectFrom(table).select('project_id').where('project_id', '=', project.id).execute();
      assert.equal(left.length, 0, table);
    }
    const refused = await post(t, storePath(project.id), JSON.stringify(exceptionEvent({})), { 'x-sentry-auth': sentryAuth(tracked.key) });
    // Issue 18: a project that is gone answers as a wrong key does (401), not 404.
    assert.equal(refused.statusCode, 401);
  });

  it('a key of another project is refused', async () => {
    const a = await trackedProject(t, owner);
    const b = await trackedProject(t, owner);
    const res = await post(t, storePath(b.projectId), JSON.stringify(exceptionEvent({})), { 'x-sentry-auth': sentryAuth(a.key) });
    assert.equal(res.statusCode, 401);
  });
});

describe('error tracking collector', () => {
  let t: TestApp;
  let owner: TestUser;
  let tracked: Awaited<ReturnType<typeof enableTracking>>;
  before(async () => {
    ({ t, owner } = await appWithUsers(['owner']));
    tracked = await trackedProject(t, owner);
  });
  after(() => t.close());

  const count = async (projectId: number) =>
    (await t.api('GET', `/projects/${projectId}/error_tracking/errors`, { token: owner.token })).json<{ count: number }[]>();

  it('refuses: unknown or private project 401 as an unknown key, tracking off on a public project 404, no key 403', async () => {
    const event = JSON.stringify(exceptionEvent({}));
    // Issue 18: a project the caller could not see answers as a wrong key does, so that its
    // existence cannot be probed (test/api/ingestion-limits.test.ts checks the parity).
    const unknown = await post(t, storePath(999999), event, { 'x-sentry-auth': sentryAuth(tracked.key) });
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(unknown.json(), { message: '401 Unauthorized' });

    const other = await createProject(t.app, owner);
    const never = await post(t, storePath(other.id), event, { 'x-sentry-auth': sentryAuth('bset_nope') });
    assert.equal(never.statusCode, 401);
    const publicOther = await createProject(t.app, owner, { visibility: 'public' });
    const publicNever = await post(t, storePath(publicOther.id), event, { 'x-sentry-auth': sentryAuth('bset_nope') });
    assert.equal(publicNever.statusCode, 404);
    assert.deepEqual(publicNever.json(), { message: '404 Not Found' });

    const off = await enableTracking(t, (await createProject(t.app, owner, { visibility: 'public' })).id, owner.token);
    await t.api('PATCH', `/projects/${off.projectId}/error_tracking/settings`, { token: owner.token, body: { active: false } });
    const disabled = await post(t, envelopePath(off.projectId), envelope({}, [{ type: 'event', payload: exceptionEvent({}) }]), {
      'x-sentry-auth': sentryAuth(off.key),
    });
    assert.equal(disabled.statusCode, 404);

    const noKey = await post(t, storePath(tracked.projectId), event);
    assert.equal(noKey.statusCode, 403);
    const badKey = await post(t, storePath(tracked.projectId), event, { 'x-sentry-auth': sentryAuth('bset_0000') });
    assert.equal(badKey.statusCode, 401);
    assert.deepEqual(badKey.json(), { message: '401 Unauthorized' });
  });

  it('takes the key from the query, X-Sentry-Auth or the envelope dsn; the older collector path works', async () => {
    const project = await createProject(t.app, owner);
    const p = await enableTracking(t, project.id, owner.token);
    const body = (n: number) => envelope({ event_id: hex32(n) }, [{ type: 'event', payload: exceptionEvent({ value: `v${n}` }) }]);
    const byQuery = await post(t, `${envelopePath(p.projectId)}?sentry_version=7&sentry_key=${p.key}`, body(1));
    assert.equal(byQuery.statusCode, 200, byQuery.body);
    assert.deepEqual(byQuery.json(), { id: hex32(1) });
    const byDsn = await post(
      t,
      envelopePath(p.projectId).replace(/\/$/, ''),
      envelope({ event_id: hex32(2), dsn: p.dsn }, [{ type: 'event', payload: exceptionEvent({}) }]),
    );
    assert.equal(byDsn.statusCode, 200, byDsn.body);
    const alias = await post(
      t,
      `/api/v4/error_tracking/collector/api/${p.projectId}/store`,
      JSON.stringify(exceptionEvent({ eventId: hex32(3) })),
      {
        'x-sentry-auth': sentryAuth(p.key),
        'content-type': 'application/json',
      },
    );
    assert.equal(alias.statusCode, 200, alias.body);
    assert.deepEqual(alias.json(), { id: hex32(3) });
    const conflicting = await post(t, `${envelopePath(p.projectId)}?sentry_key=${p.key}`, body(4), {
      'x-sentry-auth': sentryAuth(tracked.key),
    });
    assert.equal(conflicting.statusCode, 400);
    const [error] = await count(p.projectId);
    assert.equal(error?.count, 3);
  });

  it('decodes gzip, deflate and br under any content type; malformed bodies are 400 with a message', async () => {
    const project = await createProject(t.app, owner);
    const p = await enableTracking(t, project.id, owner.token);
    const headers = { 'x-sentry-auth': sentryAuth(p.key) };
    const text = envelope({}, [{ type: 'event', payload: exceptionEvent({}) }]);
    const cases: [string, Buffer | string, Record<string, string>][] = [
      ['gzip', gzipSync(text), { 'content-encoding': 'gzip', 'content-type': 'application/x-sentry-envelope' }],
      ['deflate', deflateSync(text), { 'content-encoding': 'deflate', 'content-type': 'text/plain' }],
      ['br', brotliCompressSync(text), { 'content-encoding': 'br', 'content-type': 'application/x-www-form-urlencoded' }],
      ['json type', text, { 'content-type': 'application/json' }],
    ];
    for (const [label, body, extra] of cases) {
      const res = await post(t, envelopePath(p.projectId), body, { ...headers, ...extra });
      assert.equal(res.statusCode, 200, `${label}: ${res.body}`);
    }
    assert.equal((await count(p.projectId))[0]?.count, 4);

    for (const [label, body, extra] of [
      ['not JSON', 'hello', {}],
      ['bad gzip', 'not gzip', { 'content-encoding': 'gzip' }],
      ['empty', '', {}],
      ['item without type', '{}\n{"length":2}\n{}\n', {}],
      ['short item', '{}\n{"type":"event","length":50}\n{}\n', {}],
      ['event not an object', '{}\n{"type":"event"}\n[1,2]\n', {}],
    ] as const) {
      const res = await post(t, envelopePath(p.projectId), body, { ...headers, ...extra });
      assert.equal(res.statusCode, 400, label);
      assert.match(res.json().message, /Failed to parse sentry request/, label);
    }
    const store = await post(t, storePath(p.projectId), '{"oops"', headers);
    assert.equal(store.statusCode, 400);
  });

  it('413 over 200 KB compressed or 1 MB decompressed, without inflating a bomb', async () => {
    const project = await createProject(t.app, owner);
    const p = await enableTracking(t, project.id, owner.token);
    const headers = { 'x-sentry-auth': sentryAuth(p.key), 'content-encoding': 'gzip' };
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
    assert.ok(bomb.length < 200 * 1024);
    const inflated = await post(t, envelopePath(p.projectId), bomb, headers);
    assert.equal(inflated.statusCode, 413);
    const big = gzipSync(randomBytes(300 * 1024));
    assert.equal((await post(t, envelopePath(p.projectId), big, headers)).statusCode, 413);
    const plain = await post(t, storePath(p.projectId), 'x'.repeat(1024 * 1024 + 1), { 'x-sentry-auth': sentryAuth(p.key) });
    assert.equal(plain.statusCode, 413);
  });

  it('store bodies: gzip (Go, PHP) and base64 zlib; event id from the payload', async () => {
    const project = await createProject(t.app, owner);
    const p = await enableTracking(t, project.id, owner.token);
    const headers = { 'x-sentry-auth': sentryAuth(p.key, 'sentry.go/0.20.0'), 'content-type': 'application/json' };
    const goEvent = {
      ...exceptionEvent({ eventId: hex32(10), platform: 'go' }),
      exception: (exceptionEvent({}).exception as { values: unknown[] }).values,
    };
    const res = await post(t, storePath(p.projectId), gzip(JSON.stringify(goEvent)), { ...headers, 'content-encoding': 'gzip' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { id: hex32(10) });
    const packed = deflateSync(JSON.stringify(exceptionEvent({ eventId: hex32(11) }))).toString('base64');
    const legacy = await post(t, storePath(p.projectId), packed, headers);
    assert.equal(legacy.statusCode, 200, legacy.body);
    const [error] = await count(p.projectId);
    assert.equal(error?.count, 2, 'the Go array form and the values form group together');
  });
});

describe('error tracking collector rate limit', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'], { env: { RATE_LIMITS: 'collector=5/m' } })));
  after(() => t.close());

  const count = async (projectId: number) =>
    (await t.api('GET', `/projects/${projectId}/error_tracking/errors`, { token: owner.token })).json<{ count: number }[]>();

  it('answers 429 with Retry-After and X-Sentry-Rate-Limits over the per-address limit of a key', async () => {
    const project = await createProject(t.app, owner);
    const p = await enableTracking(t, project.id, owner.token);
    const other = await trackedProject(t, owner);
    const send = (q: typeof p) =>
      post(t, storePath(q.projectId), JSON.stringify(exceptionEvent({})), { 'x-sentry-auth': sentryAuth(q.key) });
    for (let i = 0; i < 5; i += 1) assert.equal((await send(p)).statusCode, 200);
    const limited = await send(p);
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.match(String(limited.headers['x-sentry-rate-limits']), /^\d+::key$/);
    assert.equal((await send(other)).statusCode, 200, 'the limit is per key');
    assert.equal((await count(p.projectId))[0]?.count, 5, 'a refused event is not stored');
  });
});
