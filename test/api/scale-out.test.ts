import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIntegration, notify } from '../helpers/alerts.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { makeWorkTree, runGit } from '../helpers/git.js';
import { form, issueTokens, registerApp, sessionCookie, tokenInfo, tokenRequest } from '../helpers/oauth.js';
import { enableTracking, envelope, envelopePath, exceptionEvent, hex32, post, sentryAuth, storePath } from '../helpers/sentry.js';

/**
 * Two app instances on one database (and one Redis), as two processes behind a load balancer
 * would be (issue 9, "Scale-out"): each has its own connection pool (PostgreSQL) or its own
 * connection to the file (SQLite, WAL), its own in-process caches and its own job loop.
 * Rate limits are shared only through Redis; those checks skip without it. Alert grouping
 * across two instances is checked in test/api/alerts-processing.test.ts ("two app processes
 * sharing one PostgreSQL schema still group concurrent alerts").
 */
const redisUrl = process.env.TEST_REDIS_URL;
const needsRedis = redisUrl ? false : 'TEST_REDIS_URL is not set: counters are shared between processes only through Redis';

const TOO_MANY = { message: { error: 'This endpoint has been requested too many times. Try again later.' } };

function assertThrottled(res: LightMyRequestResponse, name: string, perMinute: number, observed: number): void {
  assert.equal(res.statusCode, 429, res.body.slice(0, 300));
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal(res.headers['ratelimit-name'], `throttle_${name}`);
  assert.equal(res.headers['ratelimit-limit'], String(perMinute));
  assert.equal(res.headers['ratelimit-observed'], String(observed));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  const reset = Number(res.headers['ratelimit-reset']);
  const now = Date.now() / 1000;
  assert.ok(reset >= now - 1 && reset <= now + 61, `RateLimit-Reset ${reset} vs now ${now}`);
  assert.ok(Date.parse(String(res.headers['ratelimit-resettime'])) > 0, 'RateLimit-ResetTime is an HTTP date');
}

describe('scale-out: rate limits shared by two instances through Redis', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: TestUser;

  before(async () => {
    if (needsRedis) return;
    const env = {
      REDIS_URL: redisUrl as string,
      // Every run (and every test file) counts under its own keys in the shared Redis.
      REDIS_PREFIX: `basalt-test-${randomBytes(6).toString('hex')}:`,
      RATE_LIMITS: 'api_authenticated=5/m,sign_in=3/m,alerts_project=4/m,collector_project=4/m',
    };
    a = await createTestApp({ env });
    b = await createTestApp({ sameDatabaseAs: a, env });
    owner = await createUser(a.app);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('api_authenticated: 3 requests on A and 2 on B pass, the 6th is 429 on either', { skip: needsRedis }, async () => {
    const alice = await createUser(a.app);
    const codes: number[] = [];
    for (const t of [a, a, a, b, b]) codes.push((await t.api('GET', '/user', { token: alice.token })).statusCode);
    assert.deepEqual(codes, [200, 200, 200, 200, 200]);
    const sixth = await b.api('GET', '/user', { token: alice.token });
    assertThrottled(sixth, 'api_authenticated', 5, 6);
    assert.deepEqual(sixth.json(), TOO_MANY);
    assertThrottled(await a.api('GET', '/user', { token: alice.token }), 'api_authenticated', 5, 7);
    assert.equal((await b.api('GET', '/user', { token: owner.token })).statusCode, 200, 'another user has their own count');
  });

  it('sign_in: failures on A and B add up; a success on one resets the login count for both', { skip: needsRedis }, async () => {
    const user = await createUser(a.app);
    const login = user.user.username;
    const ip = () => `10.9.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    assert.equal((await new TestBrowser(a.app, ip()).signIn(login, 'wrong-1')).statusCode, 401);
    assert.equal((await new TestBrowser(b.app, ip()).signIn(login, 'wrong-2')).statusCode, 401);
    assert.equal((await new TestBrowser(b.app, ip()).signIn(login, 'password-123')).statusCode, 303, 'a success resets');
    assert.equal((await new TestBrowser(a.app, ip()).signIn(login, 'wrong-3')).statusCode, 401);
    assert.equal((await new TestBrowser(b.app, ip()).signIn(login, 'wrong-4')).statusCode, 401);
    assert.equal((await new TestBrowser(a.app, ip()).signIn(login, 'wrong-5')).statusCode, 401);
    const refused = await new TestBrowser(b.app, ip()).signIn(login, 'password-123');
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['ratelimit-name'], 'throttle_sign_in');
    assert.match(refused.body, /Too many failed sign-in attempts/);
    assert.equal((await new TestBrowser(a.app, ip()).signIn(login, 'password-123')).statusCode, 429);
  });

  it('alerts: the per-project limit counts notifications on both instances', { skip: needsRedis }, async () => {
    const project = await createProject(a.app, owner);
    const integration = await createIntegration(a, project.id, { name: 'Shared limit' });
    for (const t of [a, b, a, b]) {
      const res = await notify(t, integration.url, { title: 'Disk full' }, { key: integration.token });
      assert.equal(res.statusCode, 200, res.body);
    }
    assertThrottled(await notify(b, integration.url, { title: 'Disk full' }, { key: integration.token }), 'alerts_project', 4, 5);
    assertThrottled(await notify(a, integration.url, { title: 'Disk full' }, { key: integration.token }), 'alerts_project', 4, 6);
  });

  it('collector: the per-project limit counts events on both instances', { skip: needsRedis }, async () => {
    const project = await createProject(a.app, owner);
    const tracked = await enableTracking(a, project.id, owner.token);
    const store = (t: TestApp) =>
      post(t, storePath(project.id), JSON.stringify(exceptionEvent({})), { 'x-sentry-auth': sentryAuth(tracked.key) });
    for (const t of [a, b, b, a]) assert.equal((await store(t)).statusCode, 200);
    const refused = await store(b);
    assertThrottled(refused, 'collector_project', 4, 5);
    assert.match(String(refused.headers['x-sentry-rate-limits']), /^\d+::project$/);
  });
});

describe('scale-out: state kept in the shared database', () => {
  let a: TestApp;
  let b: TestApp;
  let owner: TestUser;
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'basalt-scale-'));
  const dirs = { default: path.join(scratch, 'storage-default'), second: path.join(scratch, 'storage-second') };
  /** Both instances' clocks move together, as the clocks of two machines kept in sync by NTP. */
  const advance = (ms: number) => {
    a.manual?.advance(ms);
    b.manual?.set(a.clock.now());
  };

  before(async () => {
    const env = { STORAGES: `default=${dirs.default},second=${dirs.second}` };
    a = await createTestApp({ env });
    b = await createTestApp({ sameDatabaseAs: a, env });
    b.manual?.set(a.clock.now());
    owner = await createUser(a.app);
  });
  after(async () => {
    await b?.close();
    await a?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  describe('device flow polling (RFC 8628 §3.5)', () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const poll = (t: TestApp, deviceCode: string, clientId: string) =>
      tokenRequest(t, { grant_type: DEVICE, device_code: deviceCode, client_id: clientId });

    it('a poll on B right after one on A is slow_down, and the interval grows by 5 s for both', async () => {
      const client = await registerApp(a, { confidential: false, scopes: 'api read_api' });
      const started = await a.app.inject({
        method: 'POST',
        url: '/oauth/authorize_device',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ client_id: client.clientId, scope: 'read_api' }),
      });
      assert.equal(started.statusCode, 200, started.body);
      const { device_code: code, interval } = started.json();
      assert.equal(interval, 5);
      const errorOf = async (t: TestApp) => (await poll(t, code, client.clientId)).json().error as string;

      assert.equal(await errorOf(a), 'authorization_pending');
      assert.equal(await errorOf(b), 'slow_down', 'B sees the poll A recorded');
      advance(5_000);
      assert.equal(await errorOf(a), 'slow_down', 'the interval is 10 s now, so 5 s is too soon on A as well');
      advance(15_000);
      assert.equal(await errorOf(b), 'authorization_pending', 'after the grown interval (15 s) a poll is welcome');
      advance(14_000);
      assert.equal(await errorOf(a), 'slow_down');

      advance(20_000);
      const both = await Promise.all([errorOf(a), errorOf(b)]);
      assert.deepEqual(both.sort(), ['authorization_pending', 'slow_down'], 'two polls at once: exactly one is on time');
    });
  });

  describe('refresh-token rotation', () => {
    let client: Awaited<ReturnType<typeof registerApp>>;
    let cookie: string;
    before(async () => {
      client = await registerApp(a, { scopes: 'api read_user' });
      cookie = await sessionCookie(a, owner);
    });
    const refresh = (t: TestApp, refreshToken: string) =>
      tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: client.clientId,
        client_secret: client.secret,
      });

    it('a refresh token rotated on A and replayed on B is invalid_grant and revokes the whole family', async () => {
      const first = await issueTokens(a, cookie, client, { scope: 'api' });
      const rotated = await refresh(a, first.refresh_token);
      assert.equal(rotated.statusCode, 200, rotated.body);
      const second = rotated.json();
      assert.equal((await tokenInfo(b, second.access_token)).statusCode, 200, 'B accepts what A issued');
      const replay = await refresh(b, first.refresh_token);
      assert.equal(replay.statusCode, 400);
      assert.equal(replay.json().error, 'invalid_grant');
      assert.equal((await tokenInfo(a, second.access_token)).statusCode, 401, 'the replay revoked the rotated pair');
      assert.equal((await refresh(a, second.refresh_token)).json().error, 'invalid_grant');
    });

    it('the same refresh token on A and B at once: exactly one success, the other invalid_grant', async () => {
      for (let round = 0; round < 5; round += 1) {
        const issued = await issueTokens(a, cookie, client, { scope: 'api' });
        const results = await Promise.all([refresh(a, issued.refresh_token), refresh(b, issued.refresh_token)]);
        const codes = results.map((r) => r.statusCode).sort();
        assert.deepEqual(codes, [200, 400], results.map((r) => r.body).join(' | '));
        const winner = results.find((r) => r.statusCode === 200)?.json();
        const loser = results.find((r) => r.statusCode === 400)?.json();
        assert.equal(loser.error, 'invalid_grant');
        // Documented (docs/decisions.md, OAuth): the loser of a race counts as a replay, so the
        // family is revoked, the winner's fresh pair included.
        assert.equal((await tokenInfo(b, winner.access_token)).statusCode, 401);
        assert.equal((await tokenInfo(a, issued.access_token)).statusCode, 401);
        assert.equal((await refresh(a, winner.refresh_token)).json().error, 'invalid_grant');
      }
    });
  });

  it('a revoked personal access token is refused at once where it was revoked, and within 5 s everywhere', async () => {
    const user = await createUser(a.app);
    assert.equal((await b.api('GET', '/user', { token: user.token })).statusCode, 200, 'B has now seen the token');
    assert.equal((await a.api('DELETE', '/personal_access_tokens/self', { token: user.token })).statusCode, 204);
    assert.equal((await a.api('GET', '/user', { token: user.token })).statusCode, 401);
    advance(5_001);
    assert.equal((await b.api('GET', '/user', { token: user.token })).statusCode, 401);
  });

  it('identical envelopes sent to A and B at once make one error with the right count', async () => {
    const project = await createProject(a.app, owner);
    const tracked = await enableTracking(a, project.id, owner.token);
    const auth = { 'x-sentry-auth': sentryAuth(tracked.key), 'content-type': 'application/x-sentry-envelope' };
    const send = (t: TestApp, i: number) => {
      const eventId = hex32(1000 + i);
      const body = envelope({ event_id: eventId }, [{ type: 'event', payload: exceptionEvent({ eventId, type: 'RaceError' }) }]);
      return post(t, envelopePath(project.id), body, auth);
    };
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => send(i % 2 === 0 ? a : b, i)));
    assert.deepEqual(
      results.map((r) => r.statusCode),
      Array(16).fill(200),
      results.map((r) => r.body).join(' | '),
    );
    const errors = await b.api('GET', `/projects/${project.id}/error_tracking/errors`, { token: owner.token });
    assert.equal(errors.statusCode, 200, errors.body);
    assert.deepEqual(
      errors.json().map((e: { type: string; count: number }) => [e.type, e.count]),
      [['RaceError', 16]],
    );
  });

  it('issues created on A and B at once never repeat an iid', async () => {
    const project = await createProject(a.app, owner);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: `race ${i}` } }),
      ),
    );
    assert.ok(
      results.every((r) => r.statusCode === 201),
      results.map((r) => r.body).join(' | '),
    );
    const iids = results.map((r) => r.json().iid as number).sort((x, y) => x - y);
    assert.deepEqual(
      iids,
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
  });

  it('storage moves drained by A and B at once: each runs exactly once, all finish, no repository lost', async () => {
    const storages = a.app.modules.git.storages;
    const refsOf = (dir: string) => runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: dir });
    const projects = await Promise.all(Array.from({ length: 6 }, () => createProject(a.app, owner)));
    await a.app.platform.jobs.drain();
    const work = path.join(scratch, 'seed');
    await makeWorkTree(work, 3);
    const refs = new Map<number, string>();
    for (const p of projects) {
      const dir = storages.path('default', 'project', p.id);
      await runGit(['push', '--quiet', dir, 'main:main', `main:refs/heads/p${p.id}`], { cwd: work });
      refs.set(p.id, await refsOf(dir));
    }
    const moves: number[] = [];
    for (const [i, p] of projects.entries()) {
      const res = await (i % 2 === 0 ? a : b).api('POST', `/projects/${p.id}/repository_storage_moves`, {
        body: { destination_storage_name: 'second' },
      });
      assert.equal(res.statusCode, 201, res.body);
      moves.push(res.json().id);
    }
    // Due jobs only: error tracking keeps a retention job queued for later.
    const due = () =>
      a.app.platform.db
        .selectFrom('background_jobs')
        .select(['id', 'kind', 'state'])
        .where((eb) => eb.or([eb('state', '=', 'running'), eb.and([eb('state', '=', 'queued'), eb('run_at', '<=', a.clock.now())])]))
        .execute();
    const queued = await due();
    assert.equal(queued.length, moves.length);

    const [byA, byB] = await Promise.all([a.app.platform.jobs.drain(), b.app.platform.jobs.drain()]);
    assert.equal(byA + byB, queued.length, `A ran ${byA} jobs and B ${byB}: every job exactly once`);
    assert.deepEqual(await due(), []);

    for (const [i, id] of moves.entries()) {
      const move = (await (i % 2 === 0 ? b : a).api('GET', `/project_repository_storage_moves/${id}`)).json();
      assert.equal(move.state, 'finished', JSON.stringify(move));
    }
    for (const p of projects) {
      const row = await b.app.modules.projects.projects.findById(p.id);
      assert.equal(row?.repository_storage, 'second');
      assert.equal(row?.repository_read_only, 0);
      assert.equal(await refsOf(storages.path('second', 'project', p.id)), refs.get(p.id), `project ${p.id} kept every ref`);
      assert.ok(!existsSync(storages.path('default', 'project', p.id)), 'the source copy is removed');
    }
  });
});
