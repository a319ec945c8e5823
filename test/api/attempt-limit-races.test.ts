import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { basicAuth, createGitTestApp, type GitTestApp } from '../helpers/git.js';
import { cookiesOf, form, formFields, registerApp, sessionCookie } from '../helpers/oauth.js';
import { DeviceService } from '../../src/modules/oauth/device.service.js';
import type { ProjectRow } from '../../src/modules/projects/index.js';

/**
 * The limits that count only failures (`sign_in` for the sign-in form and git's password check,
 * `user_code` for the device page) under bursts of concurrent attempts: each attempt is counted
 * before its slow check (scrypt, the code lookup), so however many arrive at once, no more than
 * the limit are checked and the rest are refused; a success still gives its count back
 * (docs/decisions.md, "Authentication"). Memory counters with one instance; with
 * TEST_REDIS_URL, Redis counters shared by two instances, the burst split between them.
 */
const LIMIT = 10;
const BURST = 30;
const redisUrl = process.env.TEST_REDIS_URL;

const statuses = (responses: LightMyRequestResponse[]) => responses.map((r) => r.statusCode);
const tally = (codes: number[]) => codes.reduce<Record<number, number>>((acc, code) => ({ ...acc, [code]: (acc[code] ?? 0) + 1 }), {});
const randomIp = () => `10.${[...randomBytes(3)].join('.')}`;

/** The apps of one run: `a` and `b` are the same instance with memory counters. */
interface Instances {
  a: GitTestApp;
  b: TestApp;
}

function raceSuite(label: string, start: () => Promise<Instances>, skip: string | false): void {
  describe(`failed-attempt limits under concurrent attempts (${label})`, { skip }, () => {
    let a: GitTestApp;
    let b: TestApp;
    let owner: TestUser;
    let project: ProjectRow;
    /** Logins whose password was checked, and codes looked up, by either instance. */
    const checked: string[] = [];
    const looked: string[] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- only ever called with an instance as `this`
    const originalLookup = DeviceService.prototype.lookup;
    const on = (i: number) => (i % 2 === 0 ? a : b);

    before(async () => {
      ({ a, b } = await start());
      for (const users of new Set([a.app.modules.identity.users, b.app.modules.identity.users])) {
        const authenticate = users.authenticate.bind(users);
        users.authenticate = (login, password) => {
          checked.push(login);
          return authenticate(login, password);
        };
      }
      // On SQLite the lookup never waits, so without this yield no burst would interleave there.
      DeviceService.prototype.lookup = async function (this: DeviceService, typed: string) {
        looked.push(typed);
        await new Promise((resolve) => setImmediate(resolve));
        return originalLookup.call(this, typed);
      };
      owner = await createUser(a.app);
      project = await createProject(a.app, owner, { path: `race-${randomBytes(4).toString('hex')}`, visibility: 'private' });
      await a.app.platform.jobs.drain();
    });
    after(async () => {
      DeviceService.prototype.lookup = originalLookup;
      if (b !== a) await b?.close();
      await a?.close();
    });

    /** Opens the sign-in page for each attempt first, then posts every form at once. */
    const signInBurst = async (attempts: { ip: string; login: string; password: string }[]) => {
      const ready = await Promise.all(
        attempts.map(async (attempt, i) => {
          const browser = new TestBrowser(on(i).app, attempt.ip);
          const page = await browser.request('GET', '/users/sign_in');
          return { browser, token: TestBrowser.csrfOf(page.body), ...attempt };
        }),
      );
      return Promise.all(
        ready.map(({ browser, token, login, password }) =>
          browser.request('POST', '/users/sign_in', {
            form: { authenticity_token: token, 'user[login]': login, 'user[password]': password },
          }),
        ),
      );
    };

    const gitBurst = (attempts: { ip: string; login: string; password: string }[]) =>
      Promise.all(
        attempts.map(({ ip, login, password }, i) =>
          on(i).app.inject({
            method: 'GET',
            url: `/${project.full_path}.git/info/refs?service=git-upload-pack`,
            headers: { authorization: basicAuth(login, password) },
            remoteAddress: ip,
          }),
        ),
      );

    /** One signed-in user's device page, then every code posted at once (each from `ip(i)`). */
    const deviceBurst = async (user: TestUser, codes: string[], ip: (i: number) => string) => {
      const cookie = await sessionCookie(a, user);
      const page = await a.app.inject({ method: 'GET', url: '/oauth/device', headers: { cookie } });
      const jar = [cookie, ...cookiesOf(page)].join('; ');
      const csrf = formFields(page.body).authenticity_token as string;
      return Promise.all(
        codes.map((code, i) =>
          on(i).app.inject({
            method: 'POST',
            url: '/oauth/device',
            headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
            payload: form({ authenticity_token: csrf, user_code: code }),
            remoteAddress: ip(i),
          }),
        ),
      );
    };

    it('sign-in: a burst of wrong passwords for one login gets the limit checked, the rest 429', async () => {
      const user = await createUser(a.app);
      const login = user.user.username;
      const res = await signInBurst(Array.from({ length: BURST }, () => ({ ip: randomIp(), login, password: 'wrong-password' })));
      assert.deepEqual(tally(statuses(res)), { 401: LIMIT, 429: BURST - LIMIT });
      assert.equal(checked.filter((l) => l === login).length, LIMIT, 'no more passwords checked than the limit');
      const refused = res.find((r) => r.statusCode === 429);
      assert.equal(refused?.headers['ratelimit-name'], 'throttle_sign_in');
      assert.match(refused?.body ?? '', /Too many failed sign-in attempts/);
      const right = await new TestBrowser(b.app, randomIp()).signIn(login, 'password-123');
      assert.equal(right.statusCode, 429, 'the window has to end first');
    });

    it('sign-in: a burst from one IP across many logins gets the limit checked, the rest 429', async () => {
      const ip = randomIp();
      const prefix = `ghost${randomBytes(3).toString('hex')}`;
      const res = await signInBurst(Array.from({ length: BURST }, (_, i) => ({ ip, login: `${prefix}-${i}`, password: 'x' })));
      assert.deepEqual(tally(statuses(res)), { 401: LIMIT, 429: BURST - LIMIT });
      assert.equal(checked.filter((l) => l.startsWith(prefix)).length, LIMIT);
    });

    it('sign-in: concurrent successes give their counts back', async () => {
      const user = await createUser(a.app);
      const ip = randomIp();
      const ok = await signInBurst(Array.from({ length: LIMIT - 1 }, () => ({ ip, login: user.user.username, password: 'password-123' })));
      assert.deepEqual(tally(statuses(ok)), { 303: LIMIT - 1 });
      const prefix = `ghost${randomBytes(3).toString('hex')}`;
      const wrong = await signInBurst(Array.from({ length: BURST }, (_, i) => ({ ip, login: `${prefix}-${i}`, password: 'x' })));
      assert.deepEqual(tally(statuses(wrong)), { 401: LIMIT, 429: BURST - LIMIT }, 'the IP still has its whole allowance');
    });

    it('git Basic password: a burst of wrong passwords for one login gets the limit checked, the rest 429', async () => {
      const user = await createUser(a.app);
      const login = user.user.username;
      const res = await gitBurst(Array.from({ length: BURST }, () => ({ ip: randomIp(), login, password: 'wrong-password' })));
      assert.deepEqual(tally(statuses(res)), { 401: LIMIT, 429: BURST - LIMIT });
      assert.equal(checked.filter((l) => l === login).length, LIMIT);
      const refused = res.find((r) => r.statusCode === 429);
      const retryAfter = Number(refused?.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}: the window's end`);
      assert.equal(refused?.headers['ratelimit-name'], 'throttle_sign_in');
      assert.equal(refused?.headers['ratelimit-limit'], String(LIMIT));
      assert.match(refused?.body ?? '', /Too many failed sign-in attempts/);
    });

    it('git Basic password: concurrent successes give their counts back', async () => {
      const ip = randomIp();
      const ok = await gitBurst(Array.from({ length: LIMIT - 1 }, () => ({ ip, login: owner.user.username, password: 'password-123' })));
      assert.deepEqual(tally(statuses(ok)), { 200: LIMIT - 1 });
      const prefix = `ghost${randomBytes(3).toString('hex')}`;
      const wrong = await gitBurst(Array.from({ length: BURST }, (_, i) => ({ ip, login: `${prefix}-${i}`, password: 'x' })));
      assert.deepEqual(tally(statuses(wrong)), { 401: LIMIT, 429: BURST - LIMIT });
      assert.equal(checked.filter((l) => l.startsWith(prefix)).length, LIMIT);
    });

    it('device page: a burst of wrong codes from one user gets the limit looked up, the rest 429', async () => {
      const user = await createUser(a.app);
      const before = looked.length;
      const res = await deviceBurst(
        user,
        Array.from({ length: BURST }, () => 'BBBB-BBBB'),
        () => randomIp(),
      );
      assert.deepEqual(tally(statuses(res)), { 422: LIMIT, 429: BURST - LIMIT });
      assert.equal(looked.length - before, LIMIT, 'no more codes looked up than the limit');
      const refused = res.find((r) => r.statusCode === 429);
      const retryAfter = Number(refused?.headers['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}: the window's end`);
      assert.equal(refused?.headers['ratelimit-name'], 'throttle_user_code');
    });

    it('device page: concurrent right codes give their counts back', async () => {
      const client = await registerApp(a, { confidential: false, scopes: 'read_api' });
      const authorize = await a.app.inject({
        method: 'POST',
        url: '/oauth/authorize_device',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ client_id: client.clientId, scope: 'read_api' }),
      });
      const userCode = authorize.json<{ user_code: string }>().user_code;
      const user = await createUser(a.app);
      const ip = randomIp();
      const ok = await deviceBurst(
        user,
        Array.from({ length: LIMIT - 1 }, () => userCode),
        () => ip,
      );
      assert.deepEqual(tally(statuses(ok)), { 200: LIMIT - 1 });
      const wrong = await deviceBurst(
        user,
        Array.from({ length: BURST }, () => 'BBBB-BBBB'),
        () => ip,
      );
      assert.deepEqual(tally(statuses(wrong)), { 422: LIMIT, 429: BURST - LIMIT }, 'the user and the IP keep their allowance');
    });
  });
}

const env = { RATE_LIMITS: `sign_in=${LIMIT}/m,user_code=${LIMIT}/m` };

raceSuite(
  'memory counters, one instance',
  async () => {
    const a = await createGitTestApp({ env });
    return { a, b: a };
  },
  false,
);

raceSuite(
  'Redis counters, two instances',
  async () => {
    // Every run counts under its own keys in the shared Redis.
    const shared = { ...env, REDIS_URL: redisUrl as string, REDIS_PREFIX: `basalt-test-${randomBytes(6).toString('hex')}:` };
    const a = await createGitTestApp({ env: shared });
    const storages = `default=${a.storageDirs.default},second=${a.storageDirs.second}`;
    const b = await createTestApp({ sameDatabaseAs: a, env: { ...shared, STORAGES: storages } });
    return { a, b };
  },
  redisUrl ? false : 'TEST_REDIS_URL is not set: counters are shared between processes only through Redis',
);
