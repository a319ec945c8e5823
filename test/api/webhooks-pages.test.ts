// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

describe('webhook pages', () => {
  let t: TestApp;
  let owner: TestUser;
  let fullPath: string;
  let browser: TestBrowser;
  const receiver = new WebhookReceiver();

  before(async () => {
    await receiver.start();
    t = await createTestApp({ env: { WEBHOOK_ALLOW_LOCAL_NETWORK: 'true' } });
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    fullPath = project.full_path;
    browser = new TestBrowser(t.app);
    const signedIn = await browser.signIn(owner.user.username, 'password-123');
    assert.ok([302, 303].includes(signedIn.statusCode), signedIn.body);
    const developer = await createUser(t.app, { username: `dev${Date.now().toString(36)}` });
    await addMember(t.app, 'project', project.id, developer, 30);
    const devBrowser = new TestBrowser(t.app);
    await devBrowser.signIn(developer.user.username, 'password-123');
    assert.equal((await devBrowser.request('GET', `/${fullPath}/-/hooks`)).statusCode, 403);
  });
  after(async () => {
    await t.close();
    await receiver.stop();
  });

  it('Settings > Webhooks: add a hook, test it, see the delivery with its request and response, edit and delete it', async () => {
    const list = `/${fullPath}/-/hooks`;
    const empty = await browser.request('GET', list);
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /No webhooks enabled/);
    assert.match(empty.body, /aria-current="page"[^>]*>Webhooks</);
    assert.match(empty.body, /<label for="field-url">URL<\/label>/);
    assert.match(empty.body, /<label for="field-token">Secret token<\/label>/);
    const csrf = TestBrowser.csrfOf(empty.body);

    const refused = await browser.request('POST', list, { form: { authenticity_token: csrf, url: 'ftp://example.com/' } });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /Only allowed schemes are http, https/);

    const created = await browser.request('POST', list, {
      form: {
        authenticity_token: csrf,
        url: `${receiver.url}/page`,
        name: 'Chat bridge',
        token: 'page-secret',
        push_events: '1',
        issues_events: '1',
        enable_ssl_verification: '1',
      },
    });
    assert.equal(created.statusCode, 303, created.body);
    const listed = await browser.request('GET', list);
    assert.match(listed.body, /Webhook was created/);
    assert.match(listed.body, /Chat bridge/);
    assert.match(listed.body, /Active/);
    assert.ok(!listed.body.includes('page-secret'), 'the token is never shown');
    const hookId = Number(/\/-\/hooks\/(\d+)\/edit/.exec(listed.body)?.[1]);
    assert.ok(hookId > 0);
    assert.match(listed.body, />Test push events</);
    assert.match(listed.body, />Test issues events</);

    const tested = await browser.request('POST', `${list}/${hookId}/test/push_events`, { form: { authenticity_token: csrf } });
    assert.equal(tested.statusCode, 303);
    assert.match((await browser.request('GET', list)).body, /Hook executed successfully: HTTP 200/);
    const [delivery] = receiver.take('Push Hook');
    assert.equal(delivery!.headers['x-gitlab-token'], 'page-secret');

    const noIssue = await browser.request('POST', `${list}/${hookId}/test/issues_events`, { form: { authenticity_token: csrf } });
    assert.equal(noIssue.statusCode, 303);
    assert.match((await browser.request('GET', list)).body, /Ensure the project has issues/);

    const edit = await browser.request('GET', `${list}/${hookId}/edit`);
    assert.equal(edit.statusCode, 200);
    assert.match(edit.body, /Recent events/);
    assert.match(edit.body, /<td>Push events<\/td>/);
    assert.match(edit.body, />200</);
    const logPath = /href="([^"]+\/hook_logs\/\d+)"/.exec(edit.body)?.[1];
    assert.ok(logPath);
    const detail = await browser.request('GET', logPath);
    assert.equal(detail.statusCode, 200);
    assert.match(detail.body, /Request headers/);
    assert.match(detail.body, /X-Gitlab-Event&quot;: &quot;Push Hook|X-Gitlab-Event": "Push Hook/);
    assert.match(detail.body, /\[REDACTED\]/);
    assert.match(detail.body, /&quot;object_kind&quot;: &quot;push&quot;|"object_kind": "push"/);
    assert.match(detail.body, /<pre id="response-body">ok<\/pre>/);

    const saved = await browser.request('POST', `${list}/${hookId}`, {
      form: { authenticity_token: csrf, url: `${receiver.url}/renamed`, name: 'Renamed', note_events: '1' },
    });
    assert.equal(saved.statusCode, 303);
    const hook = (await t.api('GET', `/projects/${encodeURIComponent(fullPath)}/hooks/${hookId}`, { token: owner.token })).json();
    assert.equal(hook.url, `${receiver.url}/renamed`);
    assert.equal(hook.note_events, true);
    assert.equal(hook.push_events, false, 'an unchecked box turns the trigger off');
    assert.equal(hook.enable_ssl_verification, false);

    const deleted = await browser.request('POST', `${list}/${hookId}/destroy`, { form: { authenticity_token: csrf } });
    assert.equal(deleted.statusCode, 303);
    assert.match((await browser.request('GET', list)).body, /No webhooks enabled/);
    assert.equal((await browser.request('GET', `${list}/${hookId}/edit`)).statusCode, 404);
  });
});
