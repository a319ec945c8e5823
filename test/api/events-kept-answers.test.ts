import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';

type Ev = { id: number; action_name: string; target_title: string | null; author: { name: string } };

/**
 * Event lists are answered from memory while the database is unchanged (docs/decisions.md
 * "Events"): every write, through this instance or another process, must show at once.
 * Two app instances on one database stand for two processes.
 */
describe('events: kept answers follow every write', () => {
  let a: TestApp;
  let b: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let projectId: number;

  before(async () => {
    a = await createTestApp();
    b = await createTestApp({ sameDatabaseAs: a });
    alice = await createUser(a.app);
    bob = await createUser(a.app);
    projectId = (await createProject(a.app, alice, { visibility: 'public' })).id;
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  const list = async (t: TestApp, token: string | null, url = `/projects/${projectId}/events`) => {
    const res = await t.api('GET', url, { token });
    assert.equal(res.statusCode, 200, res.body);
    return { events: res.json<Ev[]>(), total: res.headers['x-total'], etag: res.headers.etag, type: res.headers['content-type'] };
  };

  it('a repeated list is the same answer, with JSON type, ETag and pagination headers', async () => {
    const first = await list(a, bob.token);
    const second = await list(a, bob.token);
    assert.deepEqual(second, first);
    assert.match(String(first.type), /^application\/json/);
    assert.ok(first.etag, 'an ETag is sent');
    const conditional = await a.api('GET', `/projects/${projectId}/events`, {
      token: bob.token,
      headers: { 'if-none-match': String(first.etag) },
    });
    assert.equal(conditional.statusCode, 304);
  });

  it('an event written through the same instance shows at once', async () => {
    const before = await list(a, bob.token);
    await a.api('POST', `/projects/${projectId}/issues`, { token: alice.token, body: { title: 'Seen at once' } });
    const after = await list(a, bob.token);
    assert.equal(after.events[0]?.target_title, 'Seen at once');
    assert.equal(Number(after.total), Number(before.total) + 1);
    assert.notEqual(after.etag, before.etag);
  });

  it('an event written through another process shows at once', async () => {
    await list(b, bob.token);
    await list(b, bob.token);
    await a.api('POST', `/projects/${projectId}/issues`, { token: alice.token, body: { title: 'Written by A' } });
    assert.equal((await list(b, bob.token)).events[0]?.target_title, 'Written by A');
  });

  it('a change outside the events table (an issue made confidential, a renamed author) shows at once', async () => {
    const issue = (await b.api('POST', `/projects/${projectId}/issues`, { token: alice.token, body: { title: 'Soon hidden' } })).json<{
      iid: number;
    }>();
    assert.ok((await list(b, bob.token)).events.some((e) => e.target_title === 'Soon hidden'));
    assert.ok((await list(b, null)).events.some((e) => e.target_title === 'Soon hidden'));
    await a.api('PUT', `/projects/${projectId}/issues/${issue.iid}`, { token: alice.token, body: { confidential: true } });
    assert.ok(!(await list(b, bob.token)).events.some((e) => e.target_title === 'Soon hidden'), 'hidden from a non-member');
    assert.ok(!(await list(b, null)).events.some((e) => e.target_title === 'Soon hidden'), 'hidden from an anonymous visitor');
    assert.ok(
      (await list(b, alice.token)).events.some((e) => e.target_title === 'Soon hidden'),
      'still shown to the owner',
    );

    await a.api('PUT', `/users/${alice.user.id}`, { body: { name: 'Alice Renamed' } });
    assert.equal((await list(b, bob.token)).events[0]?.author.name, 'Alice Renamed');
  });

  it('two viewers of one URL get their own answers', async () => {
    await a.api('POST', `/projects/${projectId}/issues`, { token: alice.token, body: { title: 'Private matter', confidential: true } });
    const url = `/projects/${projectId}/events?target_type=issue`;
    assert.equal((await list(a, alice.token, url)).events[0]?.target_title, 'Private matter');
    assert.notEqual((await list(a, bob.token, url)).events[0]?.target_title, 'Private matter');
    assert.equal((await list(a, alice.token, url)).events[0]?.target_title, 'Private matter');
  });
});
