// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import {
  envelope,
  envelopePath,
  exceptionEvent,
  hex32,
  post,
  sentryAuth,
  storePath,
  trackedProject,
  type TrackedProject,
} from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const seconds = (ms: number) => ms / 1000;

/** The pieces of the error pages (issue 22): list filters and sparklines, the error page's charts and events, settings, release health. */
describe('error tracking pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let reporter: TestUser;
  let p: TrackedProject;
  let fullPath: string;
  let ownerBrowser: TestBrowser;
  let reporterBrowser: TestBrowser;
  const store = (event: Record<string, unknown>, q = p) =>
    post(t, storePath(q.projectId), JSON.stringify(event), { 'x-sentry-auth': sentryAuth(q.key) });

  before(async () => {
    ({ t, owner, reporter } = await appWithUsers(['owner', 'reporter']));
    p = await trackedProject(t, owner);
    fullPath = (await t.api('GET', `/projects/${p.projectId}`)).json().path_with_namespace;
    await addMember(t.app, 'project', p.projectId, reporter, 20);
    const now = t.clock.now();
    // Alpha: three events over three days, in production and staging, releases 1.0 and 1.1.
    const alpha = (n: number, at: number, extra: Record<string, unknown>) =>
      store({
        ...exceptionEvent({ eventId: hex32(n), type: 'AlphaError', fn: 'alpha', timestamp: seconds(at), user: { id: `u${n}` }, ...extra }),
        tags: { browser: `Firefox ${n}`, region: 'eu' },
        breadcrumbs: { values: [{ timestamp: seconds(at - 1000), category: 'http', level: 'info', message: `GET /cart/${n}` }] },
        request: { method: 'POST', url: 'https://shop.example/cart', headers: { 'User-Agent': 'test' } },
        contexts: { runtime: { name: 'CPython', version: '3.12' } },
        sdk: { name: 'sentry.python', version: '1.21.0' },
      });
    await alpha(1, now - 2 * DAY, { environment: 'staging', release: '1.0' });
    await alpha(2, now - 3 * HOUR, { environment: 'production', release: '1.0' });
    await alpha(3, now - HOUR, { environment: 'production', release: '1.1' });
    await store(exceptionEvent({ eventId: hex32(9), type: 'BetaError', fn: 'beta', timestamp: seconds(now - 2 * HOUR), release: '2.0' }));
    ownerBrowser = new TestBrowser(t.app);
    await ownerBrowser.signIn(owner.user.username, 'password-123');
    reporterBrowser = new TestBrowser(t.app);
    await reporterBrowser.signIn(reporter.user.username, 'password-123');
  });
  after(() => t.close());

  const list = async (query = '', browser = ownerBrowser) => {
    const res = await browser.request('GET', `/${fullPath}/-/error_tracking${query}`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    return res.body;
  };
  const rows = (html: string) =>
    [...html.matchAll(/<tr data-error-id="\d+"><td class="et-wrap"><a href="[^"]+">([^<]+)</g)].map((m) => m[1]);
  const errorId = async (type: string) =>
    (await t.api('GET', `/projects/${p.projectId}/error_tracking/errors?search=${type}`)).json<{ id: number }[]>()[0]!.id;

  it('lists with tabs and counts, environment and release filters, sort, and a 24-hour sparkline per row', async () => {
    const html = await list();
    assert.deepEqual(rows(html), ['AlphaError: division by zero', 'BetaError: division by zero']);
    assert.match(html, /aria-current="page">Unresolved <span class="badge">2<\/span>/);
    assert.match(html, />All <span class="badge">2<\/span>/);
    assert.match(html, />Resolved <span class="badge">0<\/span>/);
    assert.match(html, /id="error-total">2 errors</);
    const staging = await list('?environment=staging');
    assert.deepEqual(rows(staging), ['AlphaError: division by zero']);
    assert.ok(!staging.includes('id="error-total"'), 'a filtered list is not counted');
    assert.deepEqual(rows(await list('?release=2.0')), ['BetaError: division by zero']);
    assert.deepEqual(rows(await list('?release=1.1&environment=production')), ['AlphaError: division by zero']);
    assert.deepEqual(rows(await list('?release=1.1&environment=staging')), []);
    assert.match(await list('?release=nope'), /No errors match\./);
    assert.deepEqual(rows(await list('?sort=first_seen')), ['BetaError: division by zero', 'AlphaError: division by zero']);
    assert.deepEqual(rows(await list('?sort=frequency&status=all')), ['AlphaError: division by zero', 'BetaError: division by zero']);
    // Sparklines: Alpha had two events in the last 24 hours, Beta one.
    assert.match(html, /aria-label="2 events in the last 24 hours"/);
    assert.match(html, /aria-label="1 event in the last 24 hours"/);
    assert.equal((html.match(/<svg class="et-spark"/g) ?? []).length, 2);
    // Filters keep each other in the tabs' links.
    assert.match(await list('?environment=staging'), /href="[^"]+status=resolved&amp;sort=last_seen&amp;environment=staging"/);
    assert.equal((await ownerBrowser.request('GET', `/${fullPath}/-/error_tracking?environment=${'x'.repeat(256)}`)).statusCode, 400);
  });

  it('the error page: numbers, both charts with axes and a tooltip per bar, stack trace, and the latest event', async () => {
    const id = await errorId('AlphaError');
    const res = await reporterBrowser.request('GET', `/${fullPath}/-/error_tracking/${id}/details`);
    assert.equal(res.statusCode, 200);
    const html = res.body;
    assert.match(html, /id="occurrences">3</);
    assert.match(html, /id="users-affected">3</);
    const chart24 = /<svg id="chart-24h"[^]*?<\/svg>/.exec(html)![0];
    assert.equal((chart24.match(/<g class="et-bar"/g) ?? []).length, 24);
    assert.equal((chart24.match(/<title>/g) ?? []).length, 24, 'every bar has a tooltip');
    assert.match(chart24, /<title>[\d-]+ \d\d:00 UTC: 1 event<\/title>/);
    assert.match(chart24, /class="et-axis"/);
    assert.match(chart24, /data-total="2"/);
    const chart30 = /<svg id="chart-30d"[^]*?<\/svg>/.exec(html)![0];
    assert.equal((chart30.match(/<g class="et-bar"/g) ?? []).length, 30);
    assert.match(chart30, /data-total="3"/);
    assert.match(chart30, /<text class="et-tick"[^>]*>[A-Z][a-z]{2} \d+<\/text>/, 'day labels on the x axis');
    // The latest event (3) with its facts.
    assert.match(html, /data-event-id="00000000000000000000000000000003"/);
    assert.match(html, /<h2 id="event-heading">Latest event</);
    assert.match(html, /GET \/cart\/3/);
    assert.match(html, /browser: <strong>Firefox 3<\/strong>/);
    assert.match(html, /<dt>id<\/dt><dd>u3<\/dd>/);
    assert.match(html, /POST https:\/\/shop\.example\/cart/);
    assert.match(html, /<h4>runtime<\/h4>/);
    assert.match(html, /id="event-sdk">sentry\.python 1\.21\.0</);
    // App frames first, the library's folded; the failing line marked.
    assert.match(
      html,
      /<ol class="et-frames" id="app-frames">[^]*compute|alpha[^]*<details class="et-library" id="library-frames"><summary>1 library frame/,
    );
    assert.match(html, /class="et-line current failing">\s+42 {2}\s+return total \/ count/);
    // A Reporter sees no actions.
    assert.ok(!html.includes('id="error-actions"'));
    assert.ok(!html.includes('>Resolve<'));
  });

  it('steps through events: older, newer, latest, and by event id', async () => {
    const id = await errorId('AlphaError');
    const base = `/${fullPath}/-/error_tracking/${id}/details`;
    const get = async (query: string, status = 200) => {
      const res = await ownerBrowser.request('GET', `${base}${query}`);
      assert.equal(res.statusCode, status);
      return res.body;
    };
    const latest = await get('');
    const older = /<a href="([^"]+)" rel="next">← Older/.exec(latest)?.[1]?.replaceAll('&amp;', '&');
    assert.equal(older, `${base}?event=${hex32(2)}`);
    assert.match(latest, /<span class="muted">Newer →<\/span>/, 'nothing is newer than the latest');
    const second = await get(`?event=${hex32(2)}`);
    assert.match(second, /<h2 id="event-heading">Event</);
    assert.match(second, /GET \/cart\/2/);
    assert.match(second, new RegExp(`href="${base.replaceAll('/', '\\/')}\\?event=${hex32(3)}" rel="prev">Newer`));
    assert.match(second, new RegExp(`href="${base.replaceAll('/', '\\/')}\\?event=${hex32(1)}" rel="next">← Older`));
    const first = await get(`?event=${hex32(1).toUpperCase()}`);
    assert.match(first, /GET \/cart\/1/);
    assert.match(first, /<span class="muted">← Older<\/span>/);
    // An event of another error, or none: the latest, with a message, answered 404.
    const other = await get(`?event=${hex32(9)}`, 404);
    assert.match(other, /id="missing-event"/);
    assert.match(other, /GET \/cart\/3/);
  });

  it('Resolve, Ignore and Create issue are one row for a Developer; the issue links back', async () => {
    const id = await errorId('BetaError');
    const base = `/${fullPath}/-/error_tracking/${id}/details`;
    const page = await ownerBrowser.request('GET', base);
    assert.match(page.body, /<div class="actions et-actions" id="error-actions">[^]*>Resolve<[^]*>Ignore<[^]*>Create issue</);
    const ignored = await ownerBrowser.request('POST', `${base}/status`, {
      form: { authenticity_token: TestBrowser.csrfOf(page.body), status: 'ignored' },
    });
    assert.equal(ignored.statusCode, 303);
    assert.match(await list('?status=ignored'), /BetaError/);
    assert.match(await list('?status=ignored'), /aria-current="page">Ignored <span class="badge">1</);
    const created = await ownerBrowser.request('POST', `${base}/issue`, { form: { authenticity_token: TestBrowser.csrfOf(page.body) } });
    assert.equal(created.statusCode, 303);
    const linked = await ownerBrowser.request('GET', base);
    const issueHref = /<p id="linked-issue">Issue <a href="([^"]+)"/.exec(linked.body)?.[1];
    assert.ok(issueHref);
    const issue = await ownerBrowser.request('GET', issueHref);
    assert.equal(issue.statusCode, 200);
    assert.ok(issue.body.includes(`href="${base}"`), 'the issue page links back to the error');
  });

  it('release health: sessions and crash-free rate per release and environment', async () => {
    const q = await trackedProject(t, owner);
    const path = (await t.api('GET', `/projects/${q.projectId}`)).json().path_with_namespace;
    const empty = await ownerBrowser.request('GET', `/${path}/-/error_tracking/releases`);
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /No sessions yet/);
    const started = new Date(t.clock.now() - HOUR).toISOString();
    const body = envelope({}, [
      {
        type: 'sessions',
        payload: { attrs: { release: 'shop@2.0', environment: 'production' }, aggregates: [{ started, exited: 97, crashed: 3 }] },
      },
      { type: 'sessions', payload: { attrs: { release: 'shop@2.0', environment: 'staging' }, aggregates: [{ started, exited: 10 }] } },
    ]);
    const sent = await post(t, `${envelopePath(q.projectId)}?sentry_key=${q.key}&sentry_version=7`, body, {});
    assert.equal(sent.statusCode, 200, sent.body);
    const res = await ownerBrowser.request('GET', `/${path}/-/error_tracking/releases`);
    assert.match(res.body, /<table id="releases">/);
    const cells = [
      ...res.body.matchAll(
        /<tr><td class="et-wrap"><code>([^<]+)<\/code><\/td><td>([^<]+)<\/td><td class="sessions">(\d+)<\/td><td class="crash-free"><span[^>]*>([^<]+)</g,
      ),
    ].map((m) => m.slice(1));
    assert.deepEqual(cells.sort(), [
      ['shop@2.0', 'production', '100', '97.00 %'],
      ['shop@2.0', 'staging', '10', '100.00 %'],
    ]);
  });

  it('Settings > Monitor: the Active toggle, the DSN and snippets, client keys created and revoked (the rotation)', async () => {
    const project = await createProject(t.app, owner);
    const settings = `/${project.full_path}/-/settings/operations`;
    // The empty list leads a Maintainer to the DSN and snippets; a Reporter reads text.
    const empty = await ownerBrowser.request('GET', `/${project.full_path}/-/error_tracking`);
    assert.ok(empty.body.includes(`href="${settings}#error-tracking-settings">Get the DSN and setup snippets</a>`));
    await addMember(t.app, 'project', project.id, reporter, 20);
    const theirs = await reporterBrowser.request('GET', `/${project.full_path}/-/error_tracking`);
    assert.match(theirs.body, /No errors yet/);
    assert.ok(!theirs.body.includes('setup snippets</a>'));

    const page = await ownerBrowser.request('GET', settings);
    assert.match(page.body, /id="error-tracking-state">disabled</);
    assert.match(page.body, /<input id="field-active-true" type="checkbox" name="active" value="true"\/>/);
    const token = TestBrowser.csrfOf(page.body);
    const on = await ownerBrowser.request('POST', `${settings}/error_tracking`, { form: { authenticity_token: token, active: 'true' } });
    assert.equal(on.statusCode, 303);
    assert.equal(on.headers.location, `${settings}#error-tracking-settings`);
    const enabled = (await ownerBrowser.request('GET', settings)).body;
    assert.match(enabled, /id="error-tracking-state">enabled</);
    assert.match(enabled, /checked/);
    const dsn = /<input id="dsn" type="text" readonly value="([^"]+)"/.exec(enabled)?.[1];
    const keys = (await t.api('GET', `/projects/${project.id}/error_tracking/client_keys`)).json<{ id: number; tracker_dsn: string }[]>();
    assert.equal(dsn, keys[0]!.tracker_dsn);
    for (const language of ['Go', 'Java', 'Node.js', 'PHP', 'Python', 'Ruby', 'Rust'])
      assert.match(enabled, new RegExp(`<summary>${language.replace('.', '\\.')} `));
    assert.ok(enabled.includes(`Sentry.init({ dsn: &#39;${dsn}&#39;`) || enabled.includes(`Sentry.init({ dsn: '${dsn}'`));

    // Rotation: create a new key (the DSN shown becomes its), revoke the old one.
    const created = await ownerBrowser.request('POST', `${settings}/error_tracking/client_keys`, { form: { authenticity_token: token } });
    assert.equal(created.statusCode, 303);
    const two = (await ownerBrowser.request('GET', settings)).body;
    assert.match(two, /Client key bset_[0-9a-f]{8}… was created: its DSN is now the one shown\./);
    const after = (await t.api('GET', `/projects/${project.id}/error_tracking/client_keys`)).json<{ id: number; tracker_dsn: string }[]>();
    assert.equal(after.length, 2);
    assert.equal(/<input id="dsn" type="text" readonly value="([^"]+)"/.exec(two)?.[1], after[1]!.tracker_dsn);
    const revoked = await ownerBrowser.request('POST', `${settings}/error_tracking/client_keys/${after[0]!.id}/revoke`, {
      form: { authenticity_token: token },
    });
    assert.equal(revoked.statusCode, 303);
    const left = (await t.api('GET', `/projects/${project.id}/error_tracking/client_keys`)).json<{ id: number }[]>();
    assert.deepEqual(
      left.map((k) => k.id),
      [after[1]!.id],
    );
    assert.equal(
      (
        await ownerBrowser.request('POST', `${settings}/error_tracking/client_keys/${after[0]!.id}/revoke`, {
          form: { authenticity_token: token },
        })
      ).statusCode,
      404,
    );

    // Unticked, the box sends nothing: tracking goes off.
    const off = await ownerBrowser.request('POST', `${settings}/error_tracking`, { form: { authenticity_token: token } });
    assert.equal(off.statusCode, 303);
    assert.match((await ownerBrowser.request('GET', settings)).body, /id="error-tracking-state">disabled</);
    // A Reporter may not post them.
    const refused = await reporterBrowser.request('POST', `${settings}/error_tracking/client_keys`, {
      form: { authenticity_token: await reporterBrowser.csrf() },
    });
    assert.equal(refused.statusCode, 403);
  });

  it('a stranger to a private project gets 404 on the error pages', async () => {
    const stranger = await createUser(t.app);
    const browser = new TestBrowser(t.app);
    await browser.signIn(stranger.user.username, 'password-123');
    for (const path of ['', '/releases', `/${await errorId('AlphaError')}/details`]) {
      assert.equal((await browser.request('GET', `/${fullPath}/-/error_tracking${path}`)).statusCode, 404, path);
    }
  });
});
