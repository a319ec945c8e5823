// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { openDatabase } from '../../src/infra/db/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { everyPage, projectWithAlertAndError, type PageFixtures } from '../helpers/pages.js';
import { createProject, createUser } from '../helpers/factories.js';
import { createIntegration } from '../helpers/alerts.js';
import { enableTracking } from '../helpers/sentry.js';
import { authorizeQuery, registerApp } from '../helpers/oauth.js';

/** Issue 18 item 9: the defaults an instance ships with (docs/security.md "Hardening"). */

const get = (t: TestApp, url: string, remoteAddress: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, remoteAddress, headers });

describe('monitoring endpoints answer only MONITORING_ALLOWLIST', () => {
  let t: TestApp;
  let behindProxy: TestApp;
  before(async () => {
    t = await createTestApp();
    behindProxy = await createTestApp({ env: { MONITORING_ALLOWLIST: '192.0.2.0/24', TRUST_PROXY: '127.0.0.1' } });
  });
  after(async () => {
    await t.close();
    await behindProxy.close();
  });

  it('by default loopback reads /-/metrics and the readiness checks; any other address gets 404 and the bare status', async () => {
    for (const loopback of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) {
      const metrics = await get(t, '/-/metrics', loopback);
      assert.equal(metrics.statusCode, 200, loopback);
      assert.match(metrics.body, /process_resident_memory_bytes/);
      const ready = await get(t, '/-/readiness', loopback);
      assert.equal(ready.json().checks.database.status, 'ok', loopback);
    }
    for (const outsider of ['203.0.113.7', '10.1.2.3', '2001:db8::1']) {
      const metrics = await get(t, '/-/metrics', outsider);
      assert.equal(metrics.statusCode, 404, outsider);
      assert.deepEqual(metrics.json(), { message: '404 Not Found' }, 'the answer of an unknown path');
      const ready = await get(t, '/-/readiness', outsider);
      assert.equal(ready.statusCode, 200, 'load balancers still read the status code');
      assert.deepEqual(ready.json(), { status: 'ok' }, outsider);
    }
    assert.equal((await get(t, '/-/health', '203.0.113.7')).statusCode, 200);
    assert.equal((await get(t, '/-/liveness', '203.0.113.7')).statusCode, 200);
  });

  it("behind a TRUST_PROXY proxy the forwarded client's address is judged; an untrusted peer cannot forward one", async () => {
    assert.equal((await get(behindProxy, '/-/metrics', '127.0.0.1')).statusCode, 404, 'the configured list replaces loopback');
    assert.equal((await get(behindProxy, '/-/metrics', '127.0.0.1', { 'x-forwarded-for': '192.0.2.5' })).statusCode, 200);
    assert.equal((await get(behindProxy, '/-/metrics', '127.0.0.1', { 'x-forwarded-for': '203.0.113.9' })).statusCode, 404);
    assert.equal((await get(behindProxy, '/-/metrics', '203.0.113.1', { 'x-forwarded-for': '192.0.2.5' })).statusCode, 404);
    assert.equal((await get(behindProxy, '/-/metrics', '192.0.2.77')).statusCode, 200);
    const ready = await get(behindProxy, '/-/readiness', '127.0.0.1', { 'x-forwarded-for': '203.0.113.9' });
    assert.deepEqual(ready.json(), { status: 'ok' });
  });
});

describe('HTML pages: a Content-Security-Policy without inline script, no framing, no sniffing, a Referrer-Policy', () => {
  let t: TestApp;
  let fixtures: PageFixtures;
  before(async () => {
    t = await createTestApp();
    const owner = await createUser(t.app);
    fixtures = await projectWithAlertAndError(t, (await createProject(t.app, owner, { visibility: 'private' })).id, 'csp', 7);
  });
  after(() => t.close());

  function assertHardenedPage(res: LightMyRequestResponse, label: string): void {
    assert.match(String(res.headers['content-type']), /^text\/html/, `${label} (${res.statusCode})`);
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/, `${label}: ${csp}`);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/, label);
    assert.match(csp, /(^|; )script-src 'self'(;|$)/, `${label}: scripts from the server itself only: ${csp}`);
    assert.match(csp, /frame-ancestors 'none'/, label);
    assert.equal(res.headers['x-frame-options'], 'DENY', label);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', label);
    assert.match(String(res.headers['referrer-policy']), /^(no-referrer|strict-origin-when-cross-origin|same-origin)$/, label);
    // Nothing the policy would block: no inline script (only the one static file), no inline handler, no inline style.
    for (const script of res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
      assert.match(script[1] ?? '', /^ src="\/-\/static\/basalt\.js\?v=[\w-]+" defer$/, `${label}: ${script[0]}`);
      assert.equal(script[2], '', `${label}: no inline script`);
    }
    assert.equal(res.body.match(/<script/gi)?.length ?? 0, res.body.match(/<script\b[^>]*><\/script>/gi)?.length ?? 0, label);
    assert.doesNotMatch(res.body, /<[^>]+\son[a-z]+\s*=/i, `${label}: inline event handler`);
    assert.doesNotMatch(res.body, /<[^>]+\sstyle\s*=/i, `${label}: inline style`);
    assert.doesNotMatch(res.body, /<style/i, `${label}: style element`);
    for (const link of res.body.matchAll(/<link[^>]*href="([^"]*)"/g)) assert.match(link[1] ?? '', /^\/-\/static\//, label);
  }

  it('every page, its forms and its error pages', async () => {
    const { root, anonymous, pages } = await everyPage(t, fixtures);
    for (const [browser, url] of pages) assertHardenedPage(await browser.request('GET', url), url);

    const failedSignIn = await anonymous.request('POST', '/users/sign_in', {
      form: {
        authenticity_token: await anonymous.request('GET', '/users/sign_in').then((r) => TestBrowser.csrfOf(r.body)),
        'user[login]': 'root',
        'user[password]': 'wrong',
      },
    });
    assertHardenedPage(failedSignIn, 'failed sign-in');
    const deviceCode = await root.request('POST', '/oauth/device', {
      form: { authenticity_token: await root.csrf(), user_code: 'BCDF-GHJK' },
    });
    assertHardenedPage(deviceCode, 'device code entry');
  });

  it('the one script is served from the server itself, as JavaScript, cached for a year at its content address', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/users/sign_in' });
    const src = /<script src="([^"]+)" defer><\/script>/.exec(page.body)?.[1] ?? '';
    assert.match(src, /^\/-\/static\/basalt\.js\?v=[\w-]{12}$/);
    const script = await t.app.inject({ method: 'GET', url: src });
    assert.equal(script.statusCode, 200);
    assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(script.headers['x-content-type-options'], 'nosniff');
    assert.match(script.body, /data-copy-target/);
    assert.doesNotMatch(script.body, /\beval\(|new Function|innerHTML/, 'nothing the policy forbids, nothing that parses markup');
    const stale = await t.app.inject({ method: 'GET', url: '/-/static/basalt.js?v=old' });
    assert.equal(stale.body, script.body, "an old address gets today's script");
    assert.equal(stale.headers['cache-control'], 'public, max-age=300', 'briefly cached');
  });
});

describe('HSTS when EXTERNAL_URL is https', () => {
  let https: TestApp;
  let http: TestApp;
  before(async () => {
    https = await createTestApp({ env: { EXTERNAL_URL: 'https://basalt.test' } });
    http = await createTestApp();
  });
  after(async () => {
    await https.close();
    await http.close();
  });

  it('every answer asks for https only; none does on an http EXTERNAL_URL', async () => {
    for (const res of [
      await https.app.inject({ method: 'GET', url: '/users/sign_in' }),
      await https.api('GET', '/user'),
      await https.api('GET', '/nope'),
    ]) {
      const hsts = String(res.headers['strict-transport-security']);
      const maxAge = Number(/max-age=(\d+)/.exec(hsts)?.[1]);
      assert.ok(maxAge >= 31_536_000, `max-age of at least a year: ${hsts}`);
    }
    assert.equal((await http.app.inject({ method: 'GET', url: '/users/sign_in' })).headers['strict-transport-security'], undefined);
    assert.equal((await http.api('GET', '/user')).headers['strict-transport-security'], undefined);
  });
});

describe('Cache-Control: no-store on every answer that carries a secret', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('tokens, application secrets, integration keys, job tokens and client keys', async () => {
    const user = await createUser(t.app);
    const owner = await createUser(t.app);
    const projectId = (await createProject(t.app, owner)).id;
    const groupId = (await t.api('POST', '/groups', { body: { name: 'nostore', path: `nostore${Date.now()}` } })).json().id;
    const integration = await createIntegration(t, projectId, { name: 'ns', type: 'http' });
    await enableTracking(t, projectId);
    const pat = await t.api('POST', `/users/${user.user.id}/personal_access_tokens`, { body: { name: 'a', scopes: ['api'] } });
    const projectToken = await t.api('POST', `/projects/${projectId}/access_tokens`, { body: { name: 'p', scopes: ['api'] } });
    const groupToken = await t.api('POST', `/groups/${groupId}/access_tokens`, { body: { name: 'g', scopes: ['api'] } });
    const app = await t.api('POST', '/applications', { body: { name: 'ns', redirect_uri: 'https://app.example/cb', scopes: 'api' } });
    const answers: [string, LightMyRequestResponse][] = [
      [
        'own personal token',
        await t.api('POST', '/user/personal_access_tokens', { token: user.token, body: { name: 'own', scopes: ['api'] } }),
      ],
      ['personal token by an admin', pat],
      ['rotation', await t.api('POST', `/personal_access_tokens/${pat.json().id}/rotate`)],
      ['impersonation token', await t.api('POST', `/users/${user.user.id}/impersonation_tokens`, { body: { name: 'i', scopes: ['api'] } })],
      ['project token', projectToken],
      ['project token rotation', await t.api('POST', `/projects/${projectId}/access_tokens/${projectToken.json().id}/rotate`)],
      ['group token', groupToken],
      ['group token rotation', await t.api('POST', `/groups/${groupId}/access_tokens/${groupToken.json().id}/rotate`)],
      ['application', app],
      ['application secret renewal', await t.api('POST', `/applications/${app.json().id}/renew-secret`)],
      ['integration key reset', await t.api('POST', `/projects/${projectId}/alert_management/integrations/${integration.id}/reset_token`)],
      ['job token', await t.api('POST', `/projects/${projectId}/jobs`, { body: { name: 'build' } })],
      ['client keys', await t.api('GET', `/projects/${projectId}/error_tracking/client_keys`)],
      ['new client key', await t.api('POST', `/projects/${projectId}/error_tracking/client_keys`)],
    ];
    const created = await t.api('POST', `/projects/${projectId}/alert_management/integrations`, { body: { name: 'ns2', type: 'http' } });
    answers.push(['integration', created]);
    for (const [label, res] of answers) {
      assert.ok(res.statusCode === 200 || res.statusCode === 201, `${label}: ${res.statusCode} ${res.body}`);
      assert.equal(res.headers['cache-control'], 'no-store', label);
      assert.equal(res.headers.pragma, 'no-cache', label);
    }
    const ordinary = await t.api('GET', `/projects/${projectId}`);
    assert.equal(ordinary.headers['cache-control'], undefined, 'answers without secrets keep their conditional caching');
    assert.ok(ordinary.headers.etag);
  });
});

describe('files the server creates are its own alone', () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'basalt-modes-'));
  after(() => rmSync(base, { recursive: true, force: true }));
  const mode = (file: string) => statSync(file).mode & 0o777;

  it('DATA_DIR, storages, secrets.json, initial_root_password: 0700 directories and 0600 files', async () => {
    const dataDir = path.join(base, 'data', 'nested');
    const other = path.join(base, 'storages', 'other');
    const t = await createTestApp({
      env: { DATA_DIR: dataDir, STORAGES: `default=${path.join(dataDir, 'repositories')},other=${other}`, BASALT_ROOT_PASSWORD: '' },
    });
    try {
      for (const dir of [dataDir, path.join(base, 'data'), path.join(dataDir, 'repositories'), other, path.join(base, 'storages')]) {
        assert.equal(mode(dir).toString(8), '700', dir);
      }
      assert.equal(mode(path.join(dataDir, 'secrets.json')).toString(8), '600');
      assert.equal(mode(path.join(dataDir, 'initial_root_password')).toString(8), '600');
    } finally {
      await t.close();
    }
  });

  it('a new SQLite database and its -wal and -shm files are 0600', async () => {
    const file = path.join(base, 'fresh.sqlite3');
    const handle = openDatabase({ databaseUrl: null, sqliteFile: file, schema: null });
    try {
      await sql`create table t (x integer)`.execute(handle.db);
      await sql`insert into t values (1)`.execute(handle.db);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) {
        assert.ok(existsSync(f), f);
        assert.equal(mode(f).toString(8), '600', f);
      }
    } finally {
      await handle.close();
    }
  });
});

describe('/oauth/authorize with a loopback redirect URI on a port past 65535', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('is a 400 page, not a 500, and sends nobody anywhere', async () => {
    const client = await registerApp(t, { redirectUri: 'http://127.0.0.1/callback', confidential: false });
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    for (const port of ['70000', '99999', '65536']) {
      const res = await browser.request(
        'GET',
        `/oauth/authorize?${authorizeQuery(client, { redirect_uri: `http://127.0.0.1:${port}/callback`, scope: 'api' })}`,
      );
      assert.equal(res.statusCode, 400, `${port}: ${res.body.slice(0, 200)}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers.location, undefined);
    }
    // The highest port is a port: the request gets past the redirect URI check (to PKCE's, whose
    // error goes back to the client as a redirect).
    const fine = await browser.request(
      'GET',
      `/oauth/authorize?${authorizeQuery(client, { redirect_uri: 'http://127.0.0.1:65535/callback', scope: 'api' })}`,
    );
    assert.equal(fine.statusCode, 302, fine.body.slice(0, 200));
    assert.match(String(fine.headers.location), /^http:\/\/127\.0\.0\.1:65535\/callback\?/);
  });
});
