// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const RATE_HEADERS = [
  'ratelimit-name',
  'ratelimit-limit',
  'ratelimit-observed',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-resettime',
];

describe('group hooks pages (Premium and Ultimate, Owner)', () => {
  let t: TestApp;
  let owner: TestUser;
  let groupPath: string;
  let groupId: number;
  let browser: TestBrowser;
  const receiver = new WebhookReceiver();

  before(async () => {
    await receiver.start();
    t = await createTestApp({ env: { WEBHOOK_ALLOW_LOCAL_NETWORK: 'true' } });
    owner = await createUser(t.app);
    const group = await createGroup(t.app, owner, { path: `hooked${Date.now().toString(36)}` });
    groupPath = group.full_path;
    groupId = group.id;
    await createProject(t.app, owner, { path: 'app', namespaceId: group.id });
    browser = new TestBrowser(t.app);
    const signedIn = await browser.signIn(owner.user.username, 'password-123');
    assert.ok([302, 303].includes(signedIn.statusCode), signedIn.body);
  });
  after(async () => {
    await t.close();
    await receiver.stop();
  });

  it('the group page links its hooks for Owners; a Maintainer sees no link and gets 403', async () => {
    const groupPage = await browser.request('GET', `/groups/${groupPath}`);
    assert.equal(groupPage.statusCode, 200);
    assert.match(groupPage.body, new RegExp(`<a href="/groups/${groupPath}/-/hooks">Webhooks</a>`));

    const maintainer = await createUser(t.app, { username: `gm${Date.now().toString(36)}` });
    await addMember(t.app, 'namespace', groupId, maintainer, 40);
    const other = new TestBrowser(t.app);
    await other.signIn(maintainer.user.username, 'password-123');
    const seen = await other.request('GET', `/groups/${groupPath}`);
    assert.equal(seen.statusCode, 200);
    assert.ok(!seen.body.includes('/-/hooks'), 'no link for a Maintainer');
    const refused = await other.request('GET', `/groups/${groupPath}/-/hooks`);
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /You need the Owner role/);
  });

  it('add a group hook, test it, see the delivery, edit and delete it', async () => {
    const list = `/groups/${groupPath}/-/hooks`;
    const empty = await browser.request('GET', list);
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /<h1>Webhooks<\/h1>/);
    assert.match(empty.body, /<h2>Group hooks \(0\)<\/h2>/);
    assert.match(empty.body, /No webhooks enabled/);
    const csrf = TestBrowser.csrfOf(empty.body);

    const created = await browser.request('POST', list, {
      form: { authenticity_token: csrf, url: `${receiver.url}/group`, name: 'Group bridge', token: 'group-secret', push_events: '1' },
    });
    assert.equal(created.statusCode, 303, created.body);
    assert.equal(created.headers.location, list);
    const listed = await browser.request('GET', list);
    assert.match(listed.body, /Webhook was created/);
    assert.match(listed.body, /Group bridge/);
    const hookId = Number(new RegExp(`/groups/${groupPath}/-/hooks/(\\d+)/edit`).exec(listed.body)?.[1]);
    assert.ok(hookId > 0);
    // The API sees the same hook as the group's.
    const api = await t.api('GET', `/groups/${groupId}/hooks/${hookId}`, { token: owner.token });
    assert.equal(api.statusCode, 200);
    assert.equal(api.json().group_id, groupId);

    const tested = await browser.request('POST', `${list}/${hookId}/test/push_events`, { form: { authenticity_token: csrf } });
    assert.equal(tested.statusCode, 303);
    assert.match((await browser.request('GET', list)).body, /Hook executed successfully: HTTP 200/);
    const [delivery] = receiver.take('Push Hook');
    assert.equal(delivery!.headers['x-gitlab-token'], 'group-secret');

    const edit = await browser.request('GET', `${list}/${hookId}/edit`);
    assert.equal(edit.statusCode, 200);
    assert.match(edit.body, /Recent events/);
    const logId = Number(new RegExp(`${list}/${hookId}/hook_logs/(\\d+)`).exec(edit.body)?.[1]);
    assert.ok(logId > 0, 'the delivery is listed');
    const log = await browser.request('GET', `${list}/${hookId}/hook_logs/${logId}`);
    assert.equal(log.statusCode, 200);
    assert.match(log.body, /Push Hook/);

    const updated = await browser.request('POST', `${list}/${hookId}`, {
      form: { authenticity_token: csrf, url: `${receiver.url}/group2`, name: 'Renamed bridge', push_events: '1' },
    });
    assert.equal(updated.statusCode, 303, updated.body);
    assert.equal((await t.api('GET', `/groups/${groupId}/hooks/${hookId}`, { token: owner.token })).json().url, `${receiver.url}/group2`);

    const removed = await browser.request('POST', `${list}/${hookId}/destroy`, { form: { authenticity_token: csrf } });
    assert.equal(removed.statusCode, 303);
    assert.match((await browser.request('GET', list)).body, /Webhook was deleted/);
    assert.equal((await t.api('GET', `/groups/${groupId}/hooks/${hookId}`, { token: owner.token })).statusCode, 404);
  });
});

describe('group hooks pages on Free', () => {
  let t: TestApp;

  before(async () => {
    t = await createTestApp({ env: { BASALT_TIER: 'free' } });
  });
  after(() => t.close());

  it('neither the page nor the link exists, as the API answers 404', async () => {
    const owner = await createUser(t.app);
    const group = await createGroup(t.app, owner);
    const browser = new TestBrowser(t.app);
    await browser.signIn(owner.user.username, 'password-123');
    assert.equal((await browser.request('GET', `/groups/${group.full_path}/-/hooks`)).statusCode, 404);
    assert.ok(!(await browser.request('GET', `/groups/${group.full_path}`)).body.includes('/-/hooks'));
    assert.equal((await t.api('GET', `/groups/${group.id}/hooks`, { token: owner.token })).statusCode, 404);
  });
});

describe('hook tests are limited (web_hook_test, 5 a minute per user and hook)', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let fullPath: string;
  const receiver = new WebhookReceiver();

  before(async () => {
    await receiver.start();
    t = await createTestApp({ env: { WEBHOOK_ALLOW_LOCAL_NETWORK: 'true' } });
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    projectId = project.id;
    fullPath = project.full_path;
  });
  after(async () => {
    await t.close();
    await receiver.stop();
  });

  const newHook = async (token = owner.token) => {
    const res = await t.api('POST', `/projects/${projectId}/hooks`, { token, body: { url: `${receiver.url}/limited` } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as number;
  };

  it('API: the sixth test in a minute is 429 with Retry-After and RateLimit-*; another hook or user is not held back; a minute later it passes', async () => {
    assert.deepEqual(t.config.rateLimits.web_hook_test, { count: 5, periodSeconds: 60 });
    const hook = await newHook();
    const test = (id: number, token = owner.token) => t.api('POST', `/projects/${projectId}/hooks/${id}/test/push_events`, { token });
    for (let i = 0; i < 5; i += 1) assert.equal((await test(hook)).statusCode, 201, `test ${i + 1}`);
    assert.equal(receiver.take('Push Hook').length, 5);
    const refused = await test(hook);
    assert.equal(refused.statusCode, 429);
    assert.deepEqual(refused.json(), { message: { error: 'This endpoint has been requested too many times. Try again later.' } });
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
    for (const name of RATE_HEADERS) assert.ok(refused.headers[name], name);
    assert.equal(refused.headers['ratelimit-name'], 'throttle_web_hook_test');
    assert.equal(refused.headers['ratelimit-limit'], '5');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.equal(receiver.take('Push Hook').length, 0, 'nothing was sent');

    // Per hook and per user: the same user's other hook, and another maintainer on this hook, still test.
    assert.equal((await test(await newHook())).statusCode, 201);
    const other = await createUser(t.app, { username: `hm${Date.now().toString(36)}` });
    await addMember(t.app, 'project', projectId, other, 40);
    assert.equal((await test(hook, other.token)).statusCode, 201);
    receiver.take();

    t.manual!.advance(61_000);
    assert.equal((await test(hook)).statusCode, 201, 'a new window');
    receiver.take();
  });

  it('page: past the limit the list answers 429 and says when to try again', async () => {
    const hook = await newHook();
    const browser = new TestBrowser(t.app);
    await browser.signIn(owner.user.username, 'password-123');
    const list = `/${fullPath}/-/hooks`;
    const csrf = TestBrowser.csrfOf((await browser.request('GET', list)).body);
    // The API and the page count together.
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await t.api('POST', `/projects/${projectId}/hooks/${hook}/test/push_events`, { token: owner.token })).statusCode, 201);
    }
    for (let i = 0; i < 2; i += 1) {
      const ok = await browser.request('POST', `${list}/${hook}/test/push_events`, { form: { authenticity_token: csrf } });
      assert.equal(ok.statusCode, 303);
    }
    const refused = await browser.request('POST', `${list}/${hook}/test/push_events`, { form: { authenticity_token: csrf } });
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(refused.headers['ratelimit-name'], 'throttle_web_hook_test');
    assert.match(
      refused.body,
      /class="flash flash-error" role="alert">Too many tests: a hook can be tested 5 times a minute\. Try again in \d+ seconds?\./,
    );
    assert.match(refused.body, /<h1>Webhooks<\/h1>/, 'the list itself, with its buttons');
    assert.equal(receiver.take('Push Hook').length, 5);
  });
});

describe('web_hook_test is configured with RATE_LIMITS', () => {
  it('a stricter limit applies; a RATE_LIMITS without it turns it off', async () => {
    for (const [limits, allowed] of [
      ['web_hook_test=2/m', 2],
      ['sign_in=10/m', 8],
    ] as const) {
      const receiver = new WebhookReceiver();
      await receiver.start();
      const t = await createTestApp({ env: { WEBHOOK_ALLOW_LOCAL_NETWORK: 'true', RATE_LIMITS: limits } });
      try {
        const owner = await createUser(t.app);
        const project = await createProject(t.app, owner);
        const hook = await t.api('POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: `${receiver.url}/x` } });
        const codes: number[] = [];
        for (let i = 0; i < 8; i += 1)
          codes.push(
            (await t.api('POST', `/projects/${project.id}/hooks/${hook.json().id}/test/push_events`, { token: owner.token })).statusCode,
          );
        assert.deepEqual(
          codes,
          codes.map((_, i) => (i < allowed ? 201 : 429)),
          limits,
        );
      } finally {
        await t.close();
        await receiver.stop();
      }
    }
  });
});
