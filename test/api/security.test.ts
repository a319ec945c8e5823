// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { constantTimeEqual, sha256Hex } from '../../src/infra/crypto.js';
import { ROOT_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { everyPage, projectWithAlertAndError, type PageFixtures } from '../helpers/pages.js';
import { createProject, type TestUser } from '../helpers/factories.js';
import { createIntegration } from '../helpers/alerts.js';
import { authorizeQuery, form, issueTokens, obtainCode, registerApp } from '../helpers/oauth.js';
import { appWithUsers } from '../helpers/suite.js';

/**
 * Security review (issue 10, deliverable 3): the protections not already proven by
 * test/api/oauth-security.test.ts (B1–B12), auth-sessions.test.ts and git-http.test.ts.
 * docs/security.md maps every protection to its test.
 */

const SRC = path.resolve(import.meta.dirname, '..', '..', 'src');
const sourceFiles = (dir = SRC): string[] =>
  readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => /\.tsx?$/.test(f))
    .map((f) => path.join(dir, f));

interface ParsedForm {
  action: string;
  fields: Record<string, string>;
}

/** Every `<form method="post">` of a page with its named fields (inputs, selected options, buttons). */
function postForms(html: string): ParsedForm[] {
  const decode = (s: string) =>
    s
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&#x27;/g, "'");
  const forms: ParsedForm[] = [];
  for (const match of html.matchAll(/<form([^>]*)>([\s\S]*?)<\/form>/g)) {
    const attrs = match[1] ?? '';
    if (!/method="post"/i.test(attrs)) continue;
    const action = decode(/action="([^"]*)"/.exec(attrs)?.[1] ?? '');
    const fields: Record<string, string> = {};
    const inner = match[2] ?? '';
    for (const input of inner.matchAll(/<(input|button)([^>]*)>/g)) {
      const a = input[2] ?? '';
      const name = /name="([^"]*)"/.exec(a)?.[1];
      if (!name || name in fields) continue;
      if (/type="(checkbox|radio)"/.test(a) && !/checked/.test(a)) continue;
      fields[decode(name)] = decode(/value="([^"]*)"/.exec(a)?.[1] ?? 'x');
    }
    for (const select of inner.matchAll(/<select[^>]*name="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
      const chosen =
        /<option[^>]*value="([^"]*)"[^>]*selected/.exec(select[2] ?? '') ?? /<option[^>]*value="([^"]*)"/.exec(select[2] ?? '');
      fields[decode(select[1] ?? '')] = decode(chosen?.[1] ?? '');
    }
    for (const area of inner.matchAll(/<textarea[^>]*name="([^"]*)"[^>]*>([\s\S]*?)<\/textarea>/g)) {
      fields[decode(area[1] ?? '')] = decode(area[2] ?? '') || 'x';
    }
    forms.push({ action, fields });
  }
  return forms;
}

describe('security review', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let groupId: number;
  let alertIid: number;
  let errorId: number;
  let integrationId: number;
  let fixtures: PageFixtures;

  before(async () => {
    ({ t, owner } = await appWithUsers(['owner']));
    const project = await createProject(t.app, owner, { visibility: 'private' });
    projectId = project.id;
    groupId = (await t.api('POST', '/groups', { body: { name: 'sec', path: `sec${Date.now()}` } })).json().id;
    fixtures = await projectWithAlertAndError(t, projectId, 'sec', 42);
    ({ integrationId, alertIid, errorId } = fixtures);
  });
  after(() => t.close());

  it('secrets at rest: every kind of token, key, code, session and password is stored only as a digest', async () => {
    const secrets: Record<string, string> = { root_token: ROOT_TOKEN, personal_token: owner.token, password: 'password-123' };
    const created = async (method: 'POST', url: string, body: unknown, field = 'token') => {
      const res = await t.api(method, url, { body });
      assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
      return res.json()[field] as string;
    };
    secrets.impersonation_token = await created('POST', `/users/${owner.user.id}/impersonation_tokens`, { name: 'imp', scopes: ['api'] });
    secrets.project_token = await created('POST', `/projects/${projectId}/access_tokens`, { name: 'p', scopes: ['api'] });
    secrets.group_token = await created('POST', `/groups/${groupId}/access_tokens`, { name: 'g', scopes: ['api'] });
    secrets.job_token = await created('POST', `/projects/${projectId}/jobs`, { name: 'job' });
    secrets.alert_key = (await createIntegration(t, projectId, { name: 'sec2', type: 'http' })).token;
    const client = await registerApp(t);
    secrets.client_secret = client.secret;
    const browser = new TestBrowser(t.app);
    assert.equal((await browser.signIn(owner.user.username, 'password-123')).statusCode, 303);
    secrets.session = browser.cookies.get('_service_session') as string;
    const cookie = `_service_session=${secrets.session}`;
    const tokens = await issueTokens(t, cookie, client);
    secrets.access_token = tokens.access_token;
    secrets.refresh_token = tokens.refresh_token;
    secrets.code = (await obtainCode(t, cookie, client)).code;
    const device = await t.app.inject({
      method: 'POST',
      url: '/oauth/authorize_device',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ client_id: client.clientId, client_secret: client.secret, scope: 'api' }),
    });
    assert.equal(device.statusCode, 200, device.body);
    secrets.device_code = device.json().device_code;
    secrets.user_code = device.json().user_code;

    for (const [kind, value] of Object.entries(secrets)) assert.ok(value && value.length >= 8, `${kind} was created`);
    const { db } = t.app.platform;
    // Lists only this test's own tables: Kysely's introspection reads every schema, and a
    // neighbouring test file dropping its schema meanwhile makes that listing fail.
    const schema = t.database.schema;
    const tables = schema
      ? (
          await sql<{
            name: string;
          }>`select table_name as name from information_schema.tables where table_schema = ${schema} and table_type = 'BASE TABLE'`.execute(
            db,
          )
        ).rows.map((row) => row.name)
      : (
          await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)
        ).rows.map((row) => row.name);
    assert.ok(tables.length > 20, `${tables.length} tables`);
    const cells: string[] = [];
    for (const table of tables) {
      const rows = await db
        .selectFrom(table as 'users')
        .selectAll()
        .execute();
      for (const row of rows) for (const value of Object.values(row)) if (value !== null) cells.push(String(value));
    }
    const everything = cells.join('\n');
    for (const [kind, value] of Object.entries(secrets)) {
      // The secret, its random part without the type prefix, and a user code without its dash.
      const forms = [value, value.replace(/^bs[a-z]_/, ''), value.replace(/^bs[or]_[0-9]+_/, ''), value.replace(/-/g, '')].filter(
        (v) => v.length >= 8,
      );
      for (const variant of forms) assert.ok(!everything.includes(variant), `${kind} is stored in plain text`);
    }
    // Lookups go through SHA-256 digests; the user code is normalised (upper case, no dash) first.
    for (const kind of ['personal_token', 'impersonation_token', 'project_token', 'job_token', 'alert_key', 'client_secret', 'session']) {
      assert.ok(everything.includes(sha256Hex(secrets[kind] as string)), `${kind} is stored as its SHA-256`);
    }
    for (const kind of ['code', 'device_code']) {
      assert.ok(everything.includes(sha256Hex(secrets[kind] as string)), `${kind} is stored as its SHA-256`);
    }
    // OAuth tokens are `bso_<row id>_<secret>`: the row keeps the SHA-256 of the secret part.
    for (const kind of ['access_token', 'refresh_token']) {
      const secret = (secrets[kind] as string).replace(/^bs[or]_[0-9]+_/, '');
      assert.ok(everything.includes(sha256Hex(secret)), `${kind} is stored as the SHA-256 of its secret`);
    }
    assert.match(everything, /scrypt\$16384\$8\$1\$/, 'passwords are scrypt hashes');
  });

  it('constant-time comparison: constantTimeEqual, and no secret in src/ is compared with === or ==', () => {
    assert.equal(constantTimeEqual('bsa_secret', 'bsa_secret'), true);
    assert.equal(constantTimeEqual('bsa_secret', 'bsa_secreT'), false);
    assert.equal(constantTimeEqual('bsa_secret', 'bsa_secret-longer'), false);
    assert.equal(constantTimeEqual('', ''), true);
    assert.equal(constantTimeEqual('', 'x'), false);
    assert.equal(constantTimeEqual('é', 'e'), false);
    const secretish = /(secret|token|digest|password|passwd|verifier|challenge|ticket|signature|csrf|hmac|apikey|key)/i;
    const offenders: string[] = [];
    for (const file of sourceFiles()) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/^\s*(\/\/|\*)/.test(line)) return;
        for (const m of line.matchAll(/([\w.[\]'"]+)\s*(===?|!==?)\s*([\w.[\]'"]+)/g)) {
          const [, left = '', , right = ''] = m;
          const literal = (s: string) => /^(['"].*['"]|\d+|undefined|null|true|false)$/.test(s);
          if (literal(left) || literal(right)) continue;
          if (
            /\.(length|kind|type|status|size|id|name|state)$/.test(left) ||
            /\.(length|kind|type|status|size|id|name|state)$/.test(right)
          ) {
            continue;
          }
          if (secretish.test(left) || secretish.test(right)) offenders.push(`${path.relative(SRC, file)}:${i + 1}: ${m[0]}`);
        }
      });
    }
    // Reviewed, not secrets: a filter key in a page, an annotation key, two public DSN keys
    // that must agree (public keys ship inside client applications), a redirect URI, a changed
    // setting's old and new value (the audit trail's diff).
    const reviewed = [
      /^modules\/events\/events\.pages\.tsx:\d+: key === props\.filter$/,
      /^modules\/alerts\/normalize-prometheus\.rules\.ts:\d+: key !== titleKey$/,
      /^modules\/error-tracking\/collector\.routes\.ts:\d+: fromDsn !== key$/,
      /^modules\/oauth\/grants\/refresh-token\.ts:\d+: redirectUri !== token\.redirect_uri$/,
      /^modules\/projects\/projects\.service\.ts:\d+: before\[key\] !== after\[key\]$/,
    ];
    assert.deepEqual(
      offenders.filter((o) => !reviewed.some((r) => r.test(o))),
      [],
    );
    // Every module that checks a presented secret against a stored one goes through timingSafeEqual.
    for (const file of [
      'infra/crypto.ts',
      'infra/http/csrf.ts',
      'modules/alerts/integrations.service.ts',
      'modules/oauth/client-auth.service.ts',
      'modules/oauth/pkce.rules.ts',
      'modules/oauth/authorize.service.ts',
    ]) {
      assert.match(readFileSync(path.join(SRC, file), 'utf8'), /constantTimeEqual|timingSafeEqual/, file);
    }
  });

  it('SSRF: the only outbound connections in src/ are the CAPTCHA verify call to the configured URL, webhook deliveries through the address guard and the doctor probing configured services', () => {
    const outbound =
      /\bfetch\(|\bhttps?\.(request|get)\(|from 'node:(http|https|net|tls|dgram)'|from '(undici|axios|node-fetch|got)'|\bnet\.connect|new WebSocket|XMLHttpRequest/;
    // Address arithmetic from node:net (MONITORING_ALLOWLIST's ranges) opens no connection.
    const addressHelpersOnly = /^import \{ (?:(?:BlockList|isIP|isIPv4|isIPv6)(?:, )?)+ \} from 'node:net';$/;
    const hits = sourceFiles()
      .filter((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .some((l) => !/^\s*(\/\/|\*)/.test(l) && !addressHelpersOnly.test(l) && outbound.test(l)),
      )
      .map((file) => path.relative(SRC, file));
    assert.deepEqual(hits, ['cli/doctor.command.ts', 'modules/spam/captcha.service.ts', 'modules/webhooks/delivery.service.ts']);
    // `basalt doctor` opens a TCP connection to the services the operator configured, nothing else.
    const doctor = readFileSync(path.join(SRC, 'cli/doctor.command.ts'), 'utf8');
    const probed = [...doctor.matchAll(/checkService\('\w+', '(\w+)', config\./g)].map((m) => m[1]);
    assert.deepEqual(probed, ['SMTP_URL', 'REDIS_URL']);
    assert.equal((doctor.match(/net\.connect\(/g) ?? []).length, 1, 'one connect, inside checkService');
    const captcha = readFileSync(path.join(SRC, 'modules/spam/captcha.service.ts'), 'utf8');
    assert.match(captcha, /fetch\(config\.verifyUrl/, 'the URL comes from the configuration, never from a request');
    // Webhook targets are a maintainer's: every connection resolves through the guard, never a pooled socket.
    const delivery = readFileSync(path.join(SRC, 'modules/webhooks/delivery.service.ts'), 'utf8');
    assert.equal(delivery.match(/transport\.request\(/g)?.length, 1);
    assert.match(delivery, /lookup: guardedLookup\(this\.allowLocal\)/);
    assert.match(delivery, /agent: false/);
  });

  it('CSRF: every POST form of every page refuses a submission without its token or with a wrong one', async () => {
    const root = new TestBrowser(t.app);
    assert.equal((await root.signIn('root', 'root-password-123')).statusCode, 303);
    // Something for the per-item forms to act on.
    const client = await registerApp(t);
    const newApp = postForms((await root.request('GET', '/user_settings/applications')).body).find(
      (f) => f.action === '/-/user_settings/applications',
    );
    assert.ok(newApp);
    const created = await root.request('POST', '/-/user_settings/applications', {
      form: { ...newApp.fields, name: 'mine', redirect_uri: 'https://mine.example/cb', scopes: 'api' },
    });
    assert.ok(created.statusCode < 400, `creating an application through its form works with the token (${created.statusCode})`);
    const mine = await t.database.handle.db
      .selectFrom('oauth_applications')
      .select('id')
      .where('name', '=', 'mine')
      .executeTakeFirstOrThrow();
    // An application root authorized, for the Revoke form under Authorized applications.
    await issueTokens(t, root.cookieHeader(), await registerApp(t, { name: 'Authorized' }));
    await t.api('PUT', `/projects/${projectId}/notification_settings`, { body: { level: 'watch' } });
    await t.api('PUT', `/groups/${groupId}/notification_settings`, { body: { level: 'watch' } });
    const device = await t.app.inject({
      method: 'POST',
      url: '/oauth/authorize_device',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ client_id: client.clientId, client_secret: client.secret, scope: 'api' }),
    });
    const userCode = device.json().user_code as string;
    const issueIid = (await t.api('POST', `/projects/${projectId}/issues`, { body: { title: 'Forms check' } })).json().iid as number;
    // A webhook (a public address: nothing is resolved or sent), for its edit page and buttons.
    const hookId = (await t.api('POST', `/projects/${projectId}/hooks`, { body: { url: 'http://203.0.113.10/forms' } })).json()
      .id as number;

    // An integration with a sample, for the mapping page's two forms and the confirmation pages.
    const mapped = (await createIntegration(t, projectId, { name: 'forms', type: 'http' })).id;
    await t.api('PUT', `/projects/${projectId}/alert_management/integrations/${mapped}`, { body: { payload_example: '{"title":"x"}' } });

    const anonymous = new TestBrowser(t.app);
    const get = (browser: TestBrowser, url: string) => ({ browser, url, open: () => browser.request('GET', url) });
    const pages = [
      get(anonymous, '/users/sign_in'),
      get(root, '/profile'),
      get(root, '/-/profile/notifications'),
      get(root, `/oauth/authorize?${authorizeQuery(client, { scope: 'api' })}`),
      get(root, '/oauth/device'),
      {
        browser: root,
        url: 'POST /oauth/device (the confirmation page)',
        open: async () => root.request('POST', '/oauth/device', { form: { authenticity_token: await root.csrf(), user_code: userCode } }),
      },
      get(root, '/user_settings/applications'),
      get(root, `/-/user_settings/applications/${mine.id}/edit`),
      get(root, '/-/user_settings/personal_access_tokens'),
      get(root, '/-/user_settings/password/edit'),
      get(root, '/-/user_settings/profile'),
      get(root, '/projects/new'),
      get(root, `/${fixtures.fullPath}/-/issues/new`),
      get(root, `/${fixtures.fullPath}/-/issues/${issueIid}`),
      get(root, `/${fixtures.fullPath}/-/alert_management/${alertIid}/details`),
      get(root, `/${fixtures.fullPath}/-/settings/operations`),
      get(root, `/${fixtures.fullPath}/-/settings/operations/alerts/integrations/${mapped}/mapping`),
      get(root, `/${fixtures.fullPath}/-/settings/operations/alerts/integrations/${mapped}/reset_token`),
      get(root, `/${fixtures.fullPath}/-/settings/operations/alerts/integrations/${mapped}/delete`),
      get(root, `/${fixtures.fullPath}/-/hooks`),
      get(root, `/${fixtures.fullPath}/-/hooks/${hookId}/edit`),
      get(root, `/${fixtures.fullPath}/-/error_tracking/${errorId}/details`),
    ];
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const { browser, url, open } of pages) {
      const page = await open();
      assert.equal(page.statusCode, 200, `${url}: ${page.statusCode}`);
      for (const f of postForms(page.body)) {
        seen.add(f.action.replace(`/${fixtures.fullPath}/-/`, '/:project/-/').replace(/\/\d+(?=\/|$)/g, '/:n'));
        assert.ok(f.fields.authenticity_token, `${url}: the form to ${f.action} carries authenticity_token`);
        const { authenticity_token: _token, ...rest } = f.fields;
        for (const [label, fields] of [
          ['without a token', rest],
          ['with a wrong token', { ...rest, authenticity_token: 'A'.repeat(43) }],
        ] as const) {
          const res = await browser.request('POST', f.action, { form: fields });
          if (res.statusCode !== 422 && res.statusCode !== 403) problems.push(`${f.action} ${label}: ${res.statusCode}`);
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual([...seen].sort(), [
      '/-/profile/notifications',
      '/-/profile/notifications/groups/:n',
      '/-/profile/notifications/projects/:n',
      '/-/user_settings/applications',
      '/-/user_settings/applications/:n',
      '/-/user_settings/applications/:n/delete',
      '/-/user_settings/applications/:n/renew',
      '/-/user_settings/applications/authorized/:n/revoke',
      '/-/user_settings/password',
      '/-/user_settings/personal_access_tokens',
      '/-/user_settings/personal_access_tokens/:n/revoke',
      '/-/user_settings/personal_access_tokens/:n/rotate',
      '/-/user_settings/profile',
      '/:project/-/alert_management/:n/details/assignee',
      '/:project/-/alert_management/:n/details/incident',
      '/:project/-/alert_management/:n/details/status',
      '/:project/-/error_tracking/:n/details/issue',
      '/:project/-/error_tracking/:n/details/status',
      '/:project/-/hooks',
      '/:project/-/hooks/:n',
      '/:project/-/hooks/:n/destroy',
      '/:project/-/hooks/:n/test/push_events',
      '/:project/-/issues',
      '/:project/-/issues/:n/close',
      '/:project/-/issues/:n/notes',
      '/:project/-/issues/:n/sidebar',
      '/:project/-/settings/operations/alerts/integrations',
      '/:project/-/settings/operations/alerts/integrations/:n',
      '/:project/-/settings/operations/alerts/integrations/:n/delete',
      '/:project/-/settings/operations/alerts/integrations/:n/mapping',
      '/:project/-/settings/operations/alerts/integrations/:n/mapping/sample',
      '/:project/-/settings/operations/alerts/integrations/:n/reset_token',
      '/:project/-/settings/operations/alerts/integrations/:n/test',
      '/:project/-/settings/operations/alerts/settings',
      '/:project/-/settings/operations/error_tracking',
      '/:project/-/settings/operations/error_tracking/client_keys',
      '/:project/-/settings/operations/error_tracking/client_keys/:n/revoke',
      '/oauth/authorize',
      '/oauth/device',
      '/oauth/device/confirm',
      '/projects',
      '/users/sign_in',
      '/users/sign_out',
    ]);
    // Those 43 actions come from these 34 forms in the source (the notifications row form serves
    // groups and projects, the error page's ActionForm serves status and issue, the page layer's
    // ActionButton serves one-button actions, the alert settings' ConfirmPage serves re-keying and
    // deletion, the administrator's user forms are checked in the admin pages' tests): a new form
    // must be added to the pages above.
    const sourceForms = sourceFiles().reduce((n, file) => n + (readFileSync(file, 'utf8').match(/<form method="post"/g) ?? []).length, 0);
    assert.equal(sourceForms, 34);
  });

  it('pages: HTML answers cannot be framed and are not content-sniffed', async () => {
    const { pages } = await everyPage(t, fixtures);
    for (const [browser, url] of pages) {
      const res = await browser.request('GET', url);
      assert.match(String(res.headers['content-type']), /^text\/html/, `${url} (${res.statusCode})`);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
    }
    const api = await t.api('GET', `/projects/${projectId}`);
    assert.equal(api.headers['x-content-type-options'], 'nosniff', 'API answers too');
    const css = await t.app.inject({ method: 'GET', url: '/-/static/basalt.css' });
    assert.equal(css.headers['x-content-type-options'], 'nosniff', 'static files too');
    void integrationId;
  });

  it('open redirect: a signed-in visit to the sign-in page never follows a foreign redirect_to', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn(owner.user.username, 'password-123');
    for (const evil of ['//evil.example', 'https://evil.example', '/\\evil.example', 'javascript:alert(1)', '/%5Cevil.example']) {
      const res = await browser.request('GET', `/users/sign_in?redirect_to=${encodeURIComponent(evil)}`);
      assert.equal(res.statusCode, 302, evil);
      const location = String(res.headers.location);
      assert.equal(new URL(location, 'http://basalt.test').origin, 'http://basalt.test', `${evil} -> ${location}`);
      assert.ok(!/^(\/\/|\/\\|[a-z]+:)/i.test(location) || location.startsWith('http://basalt.test/'), `${evil} -> ${location}`);
    }
  });
});

describe('validation answers stay bounded however many issues a body has', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  // A hang guard, not a speed check: answering used to take time quadratic in the issues.
  it('50,000 wrong scopes: 400 naming the list first and at most 50 fields', { timeout: 60_000 }, async () => {
    const scopes = Array.from({ length: 50_000 }, () => 'x');
    const res = await t.api('POST', '/user/personal_access_tokens', { body: { name: 'many', scopes } });
    assert.equal(res.statusCode, 400);
    const message = res.json<{ message: Record<string, string[]> }>().message;
    assert.ok(Object.keys(message).length <= 50, `${Object.keys(message).length} fields`);
    assert.match((message.scopes ?? []).join(' '), /maximum is \d+ items/);
  });
});
