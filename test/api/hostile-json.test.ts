// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { createProject, createUser } from '../helpers/factories.js';
import { enableTracking, envelope, envelopePath, post, sentryAuth } from '../helpers/sentry.js';

/**
 * Issue 18: JSON nested past 100 levels is refused from its text, before JSON.parse builds it
 * (400,000 nested arrays fit in 800 KB; building them cost 100 ms and tens of MiB a request).
 */
describe('deeply nested JSON is refused before it is parsed', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const deepArrays = `${'['.repeat(400_000)}${']'.repeat(400_000)}`;
  const deepObject = `${'{"a":'.repeat(101)}1${'}'.repeat(101)}`;

  it('API JSON bodies: 400 naming the limit; 100 levels, and brackets inside strings, are fine', async () => {
    for (const payload of [deepArrays, deepObject]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v4/projects',
        headers: { 'private-token': ROOT_TOKEN, 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json<{ message: string }>().message, '400 Bad request - the JSON body nests deeper than 100 levels');
    }
    const fine = await t.api('POST', '/projects', { body: { name: 'Brackets', path: 'brackets', description: '['.repeat(1500) } });
    assert.equal(fine.statusCode, 201, fine.body);
    const hundred = `{"name":"Deep","path":"deep","x":${'['.repeat(99)}${']'.repeat(99)}}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v4/projects',
      headers: { 'private-token': ROOT_TOKEN, 'content-type': 'application/json' },
      payload: hundred,
    });
    assert.equal(res.statusCode, 201, res.body);
  });

  it('the collector and the alert receiver refuse it the same way, with their own messages', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    const p = await enableTracking(t, project.id, owner.token);
    const stored = await post(t, envelopePath(p.projectId), envelope({}, [{ type: 'event', payload: deepArrays }]), {
      'x-sentry-auth': sentryAuth(p.key),
    });
    assert.equal(stored.statusCode, 400);
    assert.match(stored.body, /nests deeper than 100 levels/);
    const integration = await t.api('POST', `/projects/${project.id}/alert_management/integrations`, {
      token: owner.token,
      body: { name: 'deep', type: 'http' },
    });
    assert.equal(integration.statusCode, 201, integration.body);
    const notified = await t.app.inject({
      method: 'POST',
      url: new URL(integration.json<{ url: string }>().url).pathname,
      headers: { authorization: `Bearer ${integration.json<{ token: string }>().token}`, 'content-type': 'application/json' },
      payload: deepArrays,
    });
    assert.equal(notified.statusCode, 400);
    assert.match(notified.json<{ message: string }>().message, /the alert payload nests deeper than 100 levels/);
  });
});

describe('bodies that cost memory in proportion to their parts', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('a form or query of more than 4096 parameters is 400, as Rack refuses it, and a query never crashes the server', async () => {
    const form = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? 'name=Formed' : `a[]=${i}`)).join('&');
    const refused = await t.app.inject({
      method: 'POST',
      url: '/api/v4/projects',
      headers: { 'private-token': ROOT_TOKEN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: form(90_000),
    });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json<{ message: string }>().message, '400 Bad request - too many parameters (at most 4096)');
    const read = await t.app.inject({
      method: 'POST',
      url: '/api/v4/projects',
      headers: { 'private-token': ROOT_TOKEN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: form(4096),
    });
    assert.equal(read.statusCode, 201, read.body);
    // A query string is parsed while the request is routed, where a throw used to end the process.
    const query = await t.api('GET', `/projects?${Array.from({ length: 4097 }, () => 'x=1').join('&')}`);
    assert.equal(query.statusCode, 400);
    assert.equal(query.json<{ message: string }>().message, '400 Bad request - too many parameters (at most 4096)');
    const deep = await t.api('GET', `/projects?a${'[b]'.repeat(40)}=1`);
    assert.equal(deep.statusCode, 400);
    const page = await t.app.inject({ method: 'GET', url: `/users/sign_in?a${'[b]'.repeat(40)}=1` });
    assert.ok(page.statusCode >= 400 && page.statusCode < 500, String(page.statusCode));
  });

  it('a JSON body that is not an object carries no parameters (Grape merges only an object)', async () => {
    const array = `[${Array.from({ length: 400_000 }, () => '0').join(',')}]`;
    for (const payload of [array, '"text"', '42', 'null']) {
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/v4/notification_settings',
        headers: { 'private-token': ROOT_TOKEN, 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json<{ level: string }>().level, 'participating');
    }
    const created = await t.api('POST', '/projects', { body: ['name', 'Listed'] });
    assert.equal(created.statusCode, 400);
    assert.match(created.json<{ message: string }>().message, /name, path are missing/);
  });
});
