// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIntegration, notify, settle } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

describe('alert pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let fullPath: string;
  let browser: TestBrowser;
  before(async () => {
    t = await createTestApp();
    await settle(t);
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    projectId = project.id;
    fullPath = project.full_path;
    browser = new TestBrowser(t.app);
    const signedIn = await browser.signIn(owner.user.username, 'password-123');
    assert.ok([302, 303].includes(signedIn.statusCode), signedIn.body);
  });
  after(() => t.close());

  it('anonymous visitors are sent to sign in and come back', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/${fullPath}/-/alert_management` });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(`/${fullPath}/-/alert_management`)}`);
  });

  it('an empty alert list leads a Maintainer to add an integration on Settings > Monitor', async () => {
    const list = await browser.request('GET', `/${fullPath}/-/alert_management`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /No alerts yet/);
    assert.ok(list.body.includes(`href="/${fullPath}/-/settings/operations">Add an integration</a>`), list.body);
    assert.match(list.body, /aria-current="page"[^>]*>Alerts</);
    assert.match(list.body, /<nav class="crumbs"[^]*Monitor[^]*Alerts/);
  });

  it('settings page: create an integration, see its URL and key once, send a test alert', async () => {
    const settings = `/${fullPath}/-/settings/operations`;
    const page = await browser.request('GET', settings);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Error tracking/, 'the error tracking section is on the same page');
    const csrf = TestBrowser.csrfOf(page.body);
    const noCsrf = await browser.request('POST', `${settings}/alerts/integrations`, { form: { name: 'Pager', type: 'http' } });
    assert.equal(noCsrf.statusCode, 422);
    const created = await browser.request('POST', `${settings}/alerts/integrations`, {
      form: { authenticity_token: csrf, name: 'Pager', type: 'http' },
    });
    assert.equal(created.statusCode, 201);
    const key = /id="integration-key">([^<]+)</.exec(created.body)?.[1];
    const url = /id="integration-url">([^<]+)</.exec(created.body)?.[1];
    assert.match(key ?? '', /^bsa_/);
    assert.match(url ?? '', /\/alerts\/notify\/pager\/[0-9a-f]{16}\.json$/);
    const again = await browser.request('GET', settings);
    assert.ok(!again.body.includes(key!), 'the key is shown only once');
    assert.ok(again.body.includes(url!));
    assert.equal((await notify(t, url!, { title: 'From outside' }, { key: key! })).statusCode, 200);

    const blank = await browser.request('POST', `${settings}/alerts/integrations`, {
      form: { authenticity_token: csrf, name: '', type: 'http' },
    });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /class="field-error"/);

    const id = /integrations\/(\d+)\/test/.exec(again.body)?.[1];
    const sent = await browser.request('POST', `${settings}/alerts/integrations/${id}/test`, {
      form: { authenticity_token: csrf, payload: '{"title":"Page test","severity":"low"}' },
    });
    assert.equal(sent.statusCode, 303);
    assert.equal(sent.headers.location, settings);
    const shown = await browser.request('GET', settings);
    assert.match(shown.body, /Test alert sent/);
    assert.match(shown.body, /Page test/);
    const bad = await browser.request('POST', `${settings}/alerts/integrations/${id}/test`, {
      form: { authenticity_token: csrf, payload: '{nope' },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /not valid JSON/);
    // The message stands beside the payload box, which keeps what was typed.
    assert.match(bad.body, /<textarea[^>]*aria-invalid="true"[^>]*>\{nope<\/textarea>/);
    assert.match(bad.body, /class="field-error"[^>]*>The test payload is not valid JSON/);
  });

  it('alert list and detail show payload, custom fields and event count; status can be changed', async () => {
    const integration = await createIntegration(t, projectId, { name: 'list' });
    const payload = { title: 'Shown <b>escaped</b>', service: 'svc', team: { name: 'ops' } };
    await notify(t, integration.url, payload, { key: integration.token });
    const [{ iid }] = (await notify(t, integration.url, payload, { key: integration.token })).json();
    const list = await browser.request('GET', `/${fullPath}/-/alert_management`);
    assert.equal(list.statusCode, 200);
    assert.ok(list.body.includes('Shown &lt;b>escaped&lt;/b>') || list.body.includes('Shown &lt;b&gt;escaped&lt;/b&gt;'));
    const detailPath = `/${fullPath}/-/alert_management/${iid}/details`;
    assert.ok(list.body.includes(`href="${detailPath}"`));
    const detail = await browser.request('GET', detailPath);
    assert.equal(detail.statusCode, 200);
    assert.match(detail.body, /data-field="Events">2</);
    assert.match(detail.body, /id="custom-fields"><dt>team<\/dt><dd>\{&quot;name&quot;:&quot;ops&quot;\}/);
    assert.match(detail.body, /id="payload">/);
    const csrf = TestBrowser.csrfOf(detail.body);
    const changed = await browser.request('POST', `${detailPath}/status`, { form: { authenticity_token: csrf, status: 'acknowledged' } });
    assert.equal(changed.statusCode, 303);
    assert.equal(changed.headers.location, detailPath);
    const after = await browser.request('GET', detailPath);
    assert.match(after.body, /data-field="Status"><span[^>]*>acknowledged</);
    assert.match(after.body, /Status changed to acknowledged/);
    const invalid = await browser.request('POST', `${detailPath}/status`, { form: { authenticity_token: csrf, status: 'gone' } });
    assert.equal(invalid.statusCode, 400);
    assert.match(String(invalid.headers['content-type']), /^text\/html/);
  });

  it('the API and incident links name the new addresses', async () => {
    const integration = await createIntegration(t, projectId, { name: 'links' });
    const [{ iid }] = (await notify(t, integration.url, { title: 'Linked' }, { key: integration.token })).json();
    const alert = (await t.api('GET', `/projects/${projectId}/alert_management/alerts/${iid}`, { token: owner.token })).json();
    assert.equal(alert.details_url, `http://basalt.test/${fullPath}/-/alert_management/${iid}/details`);
  });

  it('the former addresses answer 301 to the new ones; a non-member gets 404, a visitor the sign-in page', async () => {
    const integration = await createIntegration(t, projectId, { name: 'old' });
    const [{ iid }] = (await notify(t, integration.url, { title: 'Old address' }, { key: integration.token })).json();
    const moves: [string, string][] = [
      [`/-/projects/${projectId}/alerts?status=triggered`, `/${fullPath}/-/alert_management?status=triggered`],
      [`/-/projects/${encodeURIComponent(fullPath)}/alerts`, `/${fullPath}/-/alert_management`],
      [`/-/projects/${projectId}/alerts/${iid}`, `/${fullPath}/-/alert_management/${iid}/details`],
      [`/-/projects/${projectId}/settings/alerts`, `/${fullPath}/-/settings/operations`],
    ];
    const stranger = await createUser(t.app);
    const s = new TestBrowser(t.app);
    await s.signIn(stranger.user.username, 'password-123');
    for (const [from, to] of moves) {
      const res = await browser.request('GET', from);
      assert.equal(res.statusCode, 301, from);
      assert.equal(res.headers.location, to);
      const refused = await s.request('GET', from);
      assert.equal(refused.statusCode, 404, from);
      assert.ok(!refused.body.includes(fullPath) && refused.headers.location === undefined, 'the new address is not told');
      const visitor = await t.app.inject({ method: 'GET', url: from });
      assert.equal(visitor.statusCode, 302);
      assert.match(String(visitor.headers.location), /^\/users\/sign_in\?redirect_to=/);
    }
  });

  it('a Reporter cannot open alert pages; a Developer cannot open Settings > Monitor or create integrations', async () => {
    const reporter = await createUser(t.app);
    const developer = await createUser(t.app);
    await addMember(t.app, 'project', projectId, reporter, 20);
    await addMember(t.app, 'project', projectId, developer, 30);
    const r = new TestBrowser(t.app);
    await r.signIn(reporter.user.username, 'password-123');
    const refused = await r.request('GET', `/${fullPath}/-/alert_management`);
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /Developer role/);
    const d = new TestBrowser(t.app);
    await d.signIn(developer.user.username, 'password-123');
    const list = await d.request('GET', `/${fullPath}/-/alert_management`);
    assert.equal(list.statusCode, 200);
    assert.ok(!list.body.includes('Add an integration'), 'the empty state offers nothing a Developer cannot do');
    const page = await d.request('GET', `/${fullPath}/-/settings/operations`);
    assert.equal(page.statusCode, 403);
    assert.match(page.body, /Maintainer role/);
    const post = await d.request('POST', `/${fullPath}/-/settings/operations/alerts/integrations`, {
      form: { authenticity_token: await d.csrf(), name: 'nope' },
    });
    assert.equal(post.statusCode, 403);
  });
});
