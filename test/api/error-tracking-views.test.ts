import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { exceptionEvent, hex32, post, sentryAuth, storePath, type TrackedProject, trackedProject } from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('error tracking views: REST', () => {
  let t: TestApp;
  let owner: TestUser;
  let p: TrackedProject;
  before(async () => {
    ({ t, owner } = await appWithUsers(['owner']));
    p = await trackedProject(t, owner);
  });
  after(() => t.close());

  const store = (event: Record<string, unknown>) =>
    post(t, storePath(p.projectId), JSON.stringify(event), { 'x-sentry-auth': sentryAuth(p.key) });
  const api = (method: 'GET' | 'PUT' | 'POST', url: string, body?: unknown, token = owner.token) =>
    t.api(method, `/projects/${p.projectId}/error_tracking${url}`, { token, ...(body !== undefined ? { body } : {}) });
  const seconds = (ms: number) => ms / 1000;

  it('lists with status filter, search, sort and pagination headers', async () => {
    const now = t.clock.now();
    // Three errors: "Alpha" oldest and most frequent, "Beta" newest, "Gamma" resolved.
    for (let i = 0; i < 3; i += 1) await store(exceptionEvent({ type: 'AlphaError', fn: 'a', timestamp: seconds(now - 3 * HOUR + i) }));
    await store(exceptionEvent({ type: 'BetaError', value: 'beta 100% broken', fn: 'b', timestamp: seconds(now - HOUR) }));
    await store(exceptionEvent({ type: 'GammaError', fn: 'c', timestamp: seconds(now - 2 * HOUR) }));
    const all = (await api('GET', '/errors')).json();
    const gamma = all.find((e: { type: string }) => e.type === 'GammaError');
    await api('PUT', `/errors/${gamma.id}`, { status: 'resolved' });

    const titles = async (query: string) => (await api('GET', `/errors${query}`)).json().map((e: { type: string }) => e.type);
    assert.deepEqual(await titles(''), ['BetaError', 'GammaError', 'AlphaError'], 'default: last seen, newest first');
    assert.deepEqual(await titles('?sort=first_seen'), ['BetaError', 'GammaError', 'AlphaError']);
    assert.deepEqual(await titles('?sort=frequency'), ['AlphaError', 'GammaError', 'BetaError'], 'ties: newest error first');
    assert.deepEqual(await titles('?status=unresolved'), ['BetaError', 'AlphaError']);
    assert.deepEqual(await titles('?status=resolved'), ['GammaError']);
    assert.deepEqual(await titles('?search=BETA'), ['BetaError']);
    assert.deepEqual(await titles('?search=100%25'), ['BetaError'], '% is literal');
    assert.deepEqual(await titles('?search=_'), [], '_ is literal');
    assert.deepEqual(await titles('?search=APP.views'), ['BetaError', 'GammaError', 'AlphaError'], 'the culprit is searched too');

    const page = await api('GET', '/errors?per_page=2&page=2');
    assert.equal(page.headers['x-total'], '3');
    assert.equal(page.headers['x-total-pages'], '2');
    assert.equal(page.headers['x-prev-page'], '1');
    assert.deepEqual(
      page.json().map((e: { type: string }) => e.type),
      ['AlphaError'],
    );
    assert.equal((await api('GET', '/errors?status=bogus')).statusCode, 400);
    assert.equal((await api('GET', '/errors?sort=bogus')).statusCode, 400);
  });

  it('details: counts, users, hourly frequency for 24 h and 30 days, stack trace with in-app frames', async () => {
    const q = await trackedProject(t, owner);
    const now = t.clock.now();
    const send = (event: Record<string, unknown>) =>
      post(t, storePath(q.projectId), JSON.stringify(event), { 'x-sentry-auth': sentryAuth(q.key) });
    await send(exceptionEvent({ user: { id: 'u1' }, timestamp: seconds(now) }));
    await send(exceptionEvent({ user: { id: 'u2' }, timestamp: seconds(now - 2 * HOUR) }));
    await send(exceptionEvent({ user: { id: 'u1' }, timestamp: seconds(now - 3 * DAY) }));
    const [error] = (await t.api('GET', `/projects/${q.projectId}/error_tracking/errors`, { token: owner.token })).json();
    const res = await t.api('GET', `/projects/${q.projectId}/error_tracking/errors/${error.id}`, { token: owner.token });
    assert.equal(res.statusCode, 200);
    const d = res.json();
    assert.equal(d.count, 3);
    assert.equal(d.user_count, 2);
    assert.equal(d.frequency['24h'].length, 24);
    assert.equal(d.frequency['30d'].length, 720);
    const sum = (series: [string, number][]) => series.reduce((a, [, n]) => a + n, 0);
    assert.equal(sum(d.frequency['24h']), 2);
    assert.equal(sum(d.frequency['30d']), 3);
    assert.equal(d.frequency['24h'][23][1], 1, 'the current hour is last');
    assert.equal(d.stack_trace.type, 'ZeroDivisionError');
    assert.deepEqual(
      d.stack_trace.frames.map((f: { function: string; in_app: boolean }) => [f.function, f.in_app]),
      [
        ['compute', true],
        ['run', false],
      ],
      'newest frame first',
    );
    assert.deepEqual(d.stack_trace.frames[0].context, [
      [41, 'def compute(total, count):'],
      [42, '    return total / count'],
      [43, ''],
    ]);
    const fullPath = (await t.api('GET', `/projects/${q.projectId}`)).json().path_with_namespace;
    assert.equal(d.web_url, `http://basalt.test/${fullPath}/-/error_tracking/${error.id}/details`);
    const missing = await t.api('GET', `/projects/${q.projectId}/error_tracking/errors/999999`, { token: owner.token });
    assert.deepEqual(missing.json(), { message: '404 Error Not Found' });
    const otherProject = await t.api('GET', `/projects/${p.projectId}/error_tracking/errors/${error.id}`, { token: owner.token });
    assert.equal(otherProject.statusCode, 404, 'an error is reached only through its project');
  });

  it('Reporter reads, Developer changes status; Guest and strangers cannot', async () => {
    const [error] = (await api('GET', '/errors')).json();
    const reporter = await createUser(t.app);
    const developer = await createUser(t.app);
    const guest = await createUser(t.app);
    await addMember(t.app, 'project', p.projectId, reporter, 20);
    await addMember(t.app, 'project', p.projectId, developer, 30);
    await addMember(t.app, 'project', p.projectId, guest, 10);
    assert.equal((await api('GET', '/errors', undefined, reporter.token)).statusCode, 200);
    assert.equal((await api('GET', '/errors', undefined, guest.token)).statusCode, 403);
    assert.equal((await api('PUT', `/errors/${error.id}`, { status: 'ignored' }, reporter.token)).statusCode, 403);
    const ok = await api('PUT', `/errors/${error.id}`, { status: 'ignored' }, developer.token);
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().status, 'ignored');
    assert.equal((await api('PUT', `/errors/${error.id}`, { status: 'gone' }, developer.token)).statusCode, 400);
    assert.equal((await api('POST', `/errors/${error.id}/issue`, undefined, reporter.token)).statusCode, 403);
  });

  it('creates an issue with the stack trace and a link back, once', async () => {
    const q = await trackedProject(t, owner);
    await post(t, storePath(q.projectId), JSON.stringify(exceptionEvent({ eventId: hex32(9) })), { 'x-sentry-auth': sentryAuth(q.key) });
    const [error] = (await t.api('GET', `/projects/${q.projectId}/error_tracking/errors`, { token: owner.token })).json();
    const res = await t.api('POST', `/projects/${q.projectId}/error_tracking/errors/${error.id}/issue`, { token: owner.token });
    assert.equal(res.statusCode, 201, res.body);
    const issue = res.json();
    assert.equal(issue.title, 'ZeroDivisionError: division by zero');
    assert.match(issue.description, /## Stack trace/);
    assert.match(issue.description, /at compute \(app\/views\.py:42\) \[in app\]/);
    const fullPath = (await t.api('GET', `/projects/${q.projectId}`)).json().path_with_namespace;
    assert.ok(issue.description.includes(`http://basalt.test/${fullPath}/-/error_tracking/${error.id}/details`));
    const fetched = await t.api('GET', `/projects/${q.projectId}/issues/${issue.iid}`, { token: owner.token });
    assert.equal(fetched.json().description, issue.description);
    assert.equal(
      (await t.api('GET', `/projects/${q.projectId}/error_tracking/errors/${error.id}`, { token: owner.token })).json().issue_iid,
      issue.iid,
    );
    const again = await t.api('POST', `/projects/${q.projectId}/error_tracking/errors/${error.id}/issue`, { token: owner.token });
    assert.equal(again.statusCode, 409);
  });

  it('retention: events past the limit go in the job, errors left empty go too; one job stays scheduled', async () => {
    const q = await trackedProject(t, owner);
    const send = (event: Record<string, unknown>) =>
      post(t, storePath(q.projectId), JSON.stringify(event), { 'x-sentry-auth': sentryAuth(q.key) });
    const start = t.clock.now();
    await send(exceptionEvent({ type: 'OldOnly', timestamp: seconds(start) }));
    await send(exceptionEvent({ type: 'Mixed', timestamp: seconds(start) }));
    const pending = () =>
      t.app.platform.db
        .selectFrom('background_jobs')
        .select(['id', 'run_at'])
        .where('kind', '=', 'error_tracking_retention')
        .where('state', 'in', ['queued', 'running'])
        .execute();
    assert.equal((await pending()).length, 1, 'scheduled at start');
    await t.app.modules.errorTracking.settings.find(q.projectId); // no-op read: nothing else schedules

    t.manual?.advance(89 * DAY);
    await send(exceptionEvent({ type: 'Mixed', timestamp: seconds(t.clock.now()) }));
    t.manual?.advance(2 * DAY);
    await t.app.platform.jobs.drain();
    const list = (await t.api('GET', `/projects/${q.projectId}/error_tracking/errors`, { token: owner.token })).json();
    assert.deepEqual(
      list.map((e: { type: string }) => e.type),
      ['Mixed'],
      'the error with only expired events is gone',
    );
    const events = await t.api('GET', `/projects/${q.projectId}/error_tracking/errors/${list[0].id}/events`, { token: owner.token });
    assert.equal(events.json().length, 1, 'the 91-day-old event of Mixed is gone, the recent one stays');
    const next = await pending();
    assert.equal(next.length, 1, 'the job scheduled its next run');
    assert.equal(next[0]?.run_at, t.clock.now() + DAY);
    t.manual?.advance(DAY + 1);
    await t.app.platform.jobs.drain();
    assert.equal((await pending()).length, 1, 'still exactly one pending retention job');
  });
});

describe('error tracking views: pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let p: TrackedProject;
  let fullPath: string;
  before(async () => {
    ({ t, owner } = await appWithUsers(['owner']));
    p = await trackedProject(t, owner);
    fullPath = (await t.api('GET', `/projects/${p.projectId}`)).json().path_with_namespace;
    await post(t, storePath(p.projectId), JSON.stringify(exceptionEvent({ user: { id: 'x' } })), { 'x-sentry-auth': sentryAuth(p.key) });
  });
  after(() => t.close());

  it('anonymous visitors are sent to sign in and come back', async () => {
    const browser = new TestBrowser(t.app);
    const res = await browser.request('GET', `/${fullPath}/-/error_tracking?status=all`);
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(`/${fullPath}/-/error_tracking?status=all`)}`);
  });

  it('the list and error page render; Resolve and Create issue work with CSRF, not without', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn(owner.user.username, 'password-123');
    const list = await browser.request('GET', `/${fullPath}/-/error_tracking`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /ZeroDivisionError: division by zero/);
    assert.match(list.body, /aria-current="page"[^>]*>Error tracking</);
    const href = /href="(\/[^"]+\/-\/error_tracking\/\d+\/details)"/.exec(list.body)?.[1];
    assert.ok(href);
    assert.ok(href.startsWith(`/${fullPath}/-/`), href);
    const page = await browser.request('GET', href);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /id="occurrences">1</);
    assert.match(page.body, /id="users-affected">1</);
    assert.match(page.body, /class="et-frame in-app"/);
    assert.match(page.body, /<svg id="chart-24h"/);
    assert.match(page.body, /<svg id="chart-30d"/);
    assert.match(page.body, /<nav class="crumbs"[^]*Monitor[^]*Error tracking/);

    const forged = await browser.request('POST', `${href}/status`, { form: { status: 'resolved', authenticity_token: 'forged' } });
    assert.equal(forged.statusCode, 422);
    const token = TestBrowser.csrfOf(page.body);
    const resolved = await browser.request('POST', `${href}/status`, { form: { status: 'resolved', authenticity_token: token } });
    assert.equal(resolved.statusCode, 303);
    assert.equal(resolved.headers.location, href);
    const after = await browser.request('GET', String(resolved.headers.location));
    assert.match(after.body, /id="error-status">resolved</);
    assert.match(after.body, /class="flash flash-notice"[^>]*>The error was marked resolved\./);
    const issue = await browser.request('POST', `${href}/issue`, { form: { authenticity_token: token } });
    assert.equal(issue.statusCode, 303);
    const linked = await browser.request('GET', String(issue.headers.location));
    assert.match(linked.body, /id="linked-issue"/);
    assert.match(linked.body, /Issue #\d+ was created from this error\./);
    const twice = await browser.request('POST', `${href}/issue`, { form: { authenticity_token: token } });
    assert.equal(twice.statusCode, 409);
    assert.match(String(twice.headers['content-type']), /^text\/html/);
  });

  it('an empty list leads Maintainers to the DSN on Settings > Monitor, where error tracking is switched on and off', async () => {
    const project = await createProject(t.app, owner);
    const browser = new TestBrowser(t.app);
    await browser.signIn(owner.user.username, 'password-123');
    const list = await browser.request('GET', `/${project.full_path}/-/error_tracking`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /No errors yet/);
    const settings = `/${project.full_path}/-/settings/operations`;
    assert.ok(list.body.includes(`href="${settings}#error-tracking-settings">Get the DSN and setup snippets</a>`));
    const page = await browser.request('GET', settings);
    assert.match(page.body, /id="error-tracking-state">disabled</);
    const enabled = await browser.request('POST', `${settings}/error_tracking`, {
      form: { authenticity_token: TestBrowser.csrfOf(page.body), active: 'true' },
    });
    assert.equal(enabled.statusCode, 303);
    assert.equal(enabled.headers.location, `${settings}#error-tracking-settings`);
    const on = await browser.request('GET', settings);
    assert.match(on.body, /id="error-tracking-state">enabled</);
    assert.match(on.body, /Error tracking is enabled\./);
    const dsn = /<input id="dsn" type="text" readonly value="([^"]+)"/.exec(on.body)?.[1];
    const keys = (await t.api('GET', `/projects/${project.id}/error_tracking/client_keys`)).json();
    assert.equal(dsn, keys[0].tracker_dsn);
    const bad = await browser.request('POST', `${settings}/error_tracking`, {
      form: { authenticity_token: TestBrowser.csrfOf(on.body), active: 'maybe' },
    });
    assert.equal(bad.statusCode, 400);

    // A Developer reads the errors but is not offered the settings, which it cannot open.
    const developer = await createUser(t.app);
    await addMember(t.app, 'project', project.id, developer, 30);
    const d = new TestBrowser(t.app);
    await d.signIn(developer.user.username, 'password-123');
    const theirs = await d.request('GET', `/${project.full_path}/-/error_tracking`);
    assert.equal(theirs.statusCode, 200);
    assert.ok(!theirs.body.includes('setup snippets</a>'));
    assert.equal((await d.request('GET', settings)).statusCode, 403);
    const refused = await d.request('POST', `${settings}/error_tracking`, {
      form: { authenticity_token: await d.csrf(), active: 'false' },
    });
    assert.equal(refused.statusCode, 403);
  });

  it('the former addresses answer 301 to the new ones; a stranger gets a 404 page, not the errors nor where they went', async () => {
    const owned = new TestBrowser(t.app);
    await owned.signIn(owner.user.username, 'password-123');
    const [error] = (await t.api('GET', `/projects/${p.projectId}/error_tracking/errors`)).json();
    const moves: [string, string][] = [
      [`/-/projects/${p.projectId}/errors?status=all`, `/${fullPath}/-/error_tracking?status=all`],
      [`/-/projects/${p.projectId}/errors/${error.id}`, `/${fullPath}/-/error_tracking/${error.id}/details`],
    ];
    const stranger = await createUser(t.app);
    const browser = new TestBrowser(t.app);
    await browser.signIn(stranger.user.username, 'password-123');
    for (const [from, to] of moves) {
      const moved = await owned.request('GET', from);
      assert.equal(moved.statusCode, 301, from);
      assert.equal(moved.headers.location, to);
      const res = await browser.request('GET', from);
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers.location, undefined);
      assert.ok(!res.body.includes(fullPath));
    }
    const res = await browser.request('GET', `/${fullPath}/-/error_tracking`);
    assert.equal(res.statusCode, 404);
    assert.doesNotMatch(res.body, /ZeroDivisionError/);
  });
});
