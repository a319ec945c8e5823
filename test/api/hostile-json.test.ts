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
