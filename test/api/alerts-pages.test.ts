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
  let browser: TestBrowser;
  before(async () => {
    t = await createTestApp();
    await settle(t);
    owner = await createUser(t.app);
    projectId = (await createProject(t.app, owner)).id;
    browser = new TestBrowser(t.app);
    const signedIn = await browser.signIn(owner.user.username, 'password-123');
    assert.ok([302, 303].includes(signedIn.statusCode), signedIn.body);
  });
  after(() => t.close());

  it('anonymous visitors are sent to sign in and come back', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/-/projects/${projectId}/alerts` });
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(`/-/projects/${projectId}/alerts`)}`);
  });

  it('settings page: create an integration, see its URL and key once, send a test alert', async () => {
    const settings = `/-/projects/${projectId}/settings/alerts`;
    const page = await browser.request('GET', settings);
    assert.equal(page.statusCode, 200);
    const csrf = TestBrowser.csrfOf(page.body);
    const noCsrf = await browser.request('POST', `${settings}/integrations`, { form: { name: 'Pager', type: 'http' } });
    assert.equal(noCsrf.statusCode, 403);
    const created = await browser.request('POST', `${settings}/integrations`, {
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

    const id = /integrations\/(\d+)\/test/.exec(again.body)?.[1];
    const sent = await browser.request('POST', `${settings}/integrations/${id}/test`, {
      form: { authenticity_token: csrf, payload: '{"title":"Page test","severity":"low"}' },
    });
    assert.equal(sent.statusCode, 200);
    assert.match(sent.body, /Test alert sent/);
    assert.match(sent.body, /Page test/);
    const bad = await browser.request('POST', `${settings}/integrations/${id}/test`, {
      form: { authenticity_token: csrf, payload: '{nope' },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /not valid JSON/);
  });

  it('alert list and detail show payload, custom fields and event count; status can be changed', async () => {
    const integration = await createIntegration(t, projectId, { name: 'list' });
    const payload = { title: 'Shown <b>escaped</b>', service: 'svc', team: { name: 'ops' } };
    await notify(t, integration.url, payload, { key: integration.token });
    const [{ iid }] = (await notify(t, integration.url, payload, { key: integration.token })).json();
    const list = await browser.request('GET', `/-/projects/${projectId}/alerts`);
    assert.equal(list.statusCode, 200);
    assert.ok(list.body.includes('Shown &lt;b>escaped&lt;/b>') || list.body.includes('Shown &lt;b&gt;escaped&lt;/b&gt;'));
    const detail = await browser.request('GET', `/-/projects/${projectId}/alerts/${iid}`);
    assert.equal(detail.statusCode, 200);
    assert.match(detail.body, /data-field="Events">2</);
    assert.match(detail.body, /id="custom-fields">[^<]*&quot;team&quot;|id="custom-fields">[^<]*"team"/);
    assert.match(detail.body, /id="payload">/);
    const csrf = TestBrowser.csrfOf(detail.body);
    const changed = await browser.request('POST', `/-/projects/${projectId}/alerts/${iid}/status`, {
      form: { authenticity_token: csrf, status: 'acknowledged' },
    });
    assert.equal(changed.statusCode, 200);
    assert.match(changed.body, /data-field="Status">acknowledged</);
  });

  it('a Reporter cannot open alert pages; a Developer cannot create integrations from the page', async () => {
    const reporter = await createUser(t.app);
    const developer = await createUser(t.app);
    await addMember(t.app, 'project', projectId, reporter, 20);
    await addMember(t.app, 'project', projectId, developer, 30);
    const r = new TestBrowser(t.app);
    await r.signIn(reporter.user.username, 'password-123');
    assert.equal((await r.request('GET', `/-/projects/${projectId}/alerts`)).statusCode, 403);
    const d = new TestBrowser(t.app);
    await d.signIn(developer.user.username, 'password-123');
    const page = await d.request('GET', `/-/projects/${projectId}/settings/alerts`);
    assert.equal(page.statusCode, 200);
    assert.ok(!page.body.includes('Create integration'));
    const post = await d.request('POST', `/-/projects/${projectId}/settings/alerts/integrations`, {
      form: { authenticity_token: TestBrowser.csrfOf(page.body), name: 'nope' },
    });
    assert.equal(post.statusCode, 403);
  });
});
