import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

type Ev = {
  id: number;
  action_name: string;
  target_type: string | null;
  created_at: string;
  project_id: number;
  target_title: string | null;
};

describe('events lists: filters, days, sort, pagination', () => {
  let t: TestApp;
  let alice: TestUser;
  let projectId: number;
  const at = (day: number, h: number, m = 0, s = 0) => Date.UTC(2024, 0, day, h, m, s);

  before(async () => {
    ({ t, alice } = await appWithUsers(['alice']));
    t.manual?.set(at(1, 0));
    const project = await createProject(t.app, alice, { visibility: 'public' });
    projectId = project.id;
    // One issue event at each edge of 2024-01-10 and 2024-01-20.
    for (const moment of [at(9, 23, 59, 59), at(10, 0), at(10, 23, 59, 59), at(11, 0), at(19, 23, 59, 59), at(20, 0), at(21, 0)]) {
      t.manual?.set(moment);
      await t.api('POST', `/projects/${projectId}/issues`, { token: alice.token, body: { title: new Date(moment).toISOString() } });
    }
  });
  after(() => t.close());

  const titles = (rows: Ev[]) => rows.map((e) => e.target_title);

  it('after and before are whole days and exclusive', async () => {
    const res = await t.api('GET', `/projects/${projectId}/events?target_type=issue&after=2024-01-10&before=2024-01-20&sort=asc`, {
      token: alice.token,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(titles(res.json()), ['2024-01-11T00:00:00.000Z', '2024-01-19T23:59:59.000Z']);
    const onlyAfter = (await t.api('GET', `/users/${alice.user.id}/events?after=2024-01-19&sort=asc`, { token: alice.token })).json();
    assert.deepEqual(titles(onlyAfter), ['2024-01-20T00:00:00.000Z', '2024-01-21T00:00:00.000Z']);
    const onlyBefore = (await t.api('GET', `/events?before=2024-01-10&target_type=issue`, { token: alice.token })).json();
    assert.deepEqual(titles(onlyBefore), ['2024-01-09T23:59:59.000Z']);
  });

  it('a date that is not a day is 400', async () => {
    for (const [name, value] of [
      ['before', 'yesterday'],
      ['after', '2024-02-30'],
      ['before', '2024-1-5'],
    ]) {
      const res = await t.api('GET', `/projects/${projectId}/events?${name}=${value}`, { token: alice.token });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { message: `${name} is invalid` });
    }
  });

  it('action and target_type accept their lists only', async () => {
    const created = (await t.api('GET', `/projects/${projectId}/events?action=created`, { token: alice.token })).json<Ev[]>();
    assert.equal(created.length, 8);
    const projectOnly = (
      await t.api('GET', `/projects/${projectId}/events?action=created&target_type=issue`, { token: alice.token })
    ).json();
    assert.equal(projectOnly.length, 7);
    const closed = (await t.api('GET', `/projects/${projectId}/events?action=closed`, { token: alice.token })).json();
    assert.equal(closed.length, 0);
    const epics = await t.api('GET', `/users/${alice.user.id}/events?target_type=epic`, { token: alice.token });
    assert.equal(epics.statusCode, 200);
    assert.deepEqual(epics.json(), []);
    const badAction = await t.api('GET', `/events?action=opened`, { token: alice.token });
    assert.equal(badAction.statusCode, 400);
    assert.deepEqual(badAction.json(), { message: 'action does not have a valid value' });
    const badType = await t.api('GET', `/projects/${projectId}/events?target_type=Issue`, { token: alice.token });
    assert.equal(badType.statusCode, 400);
    assert.deepEqual(badType.json(), { message: 'target_type does not have a valid value' });
    const badSort = await t.api('GET', `/projects/${projectId}/events?sort=newest`, { token: alice.token });
    assert.equal(badSort.statusCode, 400);
  });

  it('sort orders by id, newest first by default', async () => {
    const desc = (await t.api('GET', `/projects/${projectId}/events`, { token: alice.token })).json<Ev[]>();
    const ids = desc.map((e) => e.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => b - a),
    );
    const asc = (await t.api('GET', `/projects/${projectId}/events?sort=asc`, { token: alice.token })).json<Ev[]>();
    assert.deepEqual(
      asc.map((e) => e.id),
      [...ids].reverse(),
    );
  });

  it('pages default to 1 and 20 and carry the pagination headers', async () => {
    const first = await t.api('GET', `/users/${alice.user.username}/events?per_page=3`, { token: alice.token });
    assert.equal(first.statusCode, 200);
    assert.equal(first.json().length, 3);
    assert.equal(first.headers['x-total'], '8');
    assert.equal(first.headers['x-total-pages'], '3');
    assert.equal(first.headers['x-page'], '1');
    assert.equal(first.headers['x-per-page'], '3');
    assert.equal(first.headers['x-next-page'], '2');
    assert.equal(first.headers['x-prev-page'], '');
    assert.match(String(first.headers.link), /rel="next"/);
    const last = await t.api('GET', `/users/${alice.user.username}/events?per_page=3&page=3`, { token: alice.token });
    assert.equal(last.json().length, 2);
    assert.equal(last.headers['x-next-page'], '');
    const defaults = await t.api('GET', `/users/${alice.user.id}/events`, { token: alice.token });
    assert.equal(defaults.headers['x-per-page'], '20');
    assert.equal(defaults.headers['x-page'], '1');
  });

  it('an unknown user is 404', async () => {
    const res = await t.api('GET', '/users/nobody-here/events', { token: alice.token });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 User Not Found' });
  });
});

describe('events lists: authentication and visibility', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let privateId: number;
  let publicId: number;

  before(async () => {
    ({ t, alice, bob } = await appWithUsers(['alice', 'bob']));
    privateId = (await createProject(t.app, alice, { visibility: 'private' })).id;
    publicId = (await createProject(t.app, alice, { visibility: 'public' })).id;
    await t.api('POST', `/projects/${privateId}/issues`, { token: alice.token, body: { title: 'secret plan' } });
    await t.api('POST', `/projects/${publicId}/issues`, { token: alice.token, body: { title: 'open plan' } });
    await t.api('POST', `/projects/${publicId}/issues`, { token: alice.token, body: { title: 'hush', confidential: true } });
  });
  after(() => t.close());

  it('GET /events needs a user; read_user is enough for every events list, other scopes are not', async () => {
    const anonymous = await t.api('GET', '/events', { token: null });
    assert.equal(anonymous.statusCode, 401);
    assert.deepEqual(anonymous.json(), { message: '401 Unauthorized' });
    const reader = await createUser(t.app, { scopes: ['read_user'] });
    assert.equal((await t.api('GET', '/events', { token: reader.token })).statusCode, 200);
    assert.equal((await t.api('GET', `/users/${alice.user.id}/events`, { token: reader.token })).statusCode, 200);
    const projectEvents = await t.api('GET', `/projects/${publicId}/events`, { token: reader.token });
    assert.equal(projectEvents.statusCode, 200);
    assert.ok(projectEvents.json<Ev[]>().some((e) => e.target_title === 'open plan'));
    const repoOnly = await createUser(t.app, { scopes: ['read_repository'] });
    const refused = await t.api('GET', '/events', { token: repoOnly.token });
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.json().error, 'insufficient_scope');
  });

  it('another user sees only events of projects they can see', async () => {
    const mine = (await t.api('GET', '/events', { token: alice.token })).json<Ev[]>();
    assert.ok(mine.some((e) => e.target_title === 'secret plan'));
    assert.ok(mine.some((e) => e.target_title === 'hush'));
    const seen = (await t.api('GET', `/users/${alice.user.id}/events`, { token: bob.token })).json<Ev[]>();
    assert.ok(seen.length > 0);
    assert.ok(seen.every((e) => e.project_id === publicId));
    assert.ok(!seen.some((e) => e.target_title === 'hush'), 'a confidential issue is hidden from non-members');
    const anonymous = (await t.api('GET', `/users/${alice.user.id}/events`, { token: null })).json<Ev[]>();
    assert.ok(anonymous.every((e) => e.project_id === publicId));
    const hidden = await t.api('GET', `/projects/${privateId}/events`, { token: bob.token });
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });

    await addMember(t.app, 'project', privateId, bob, 20);
    const asMember = (await t.api('GET', `/users/${alice.user.id}/events`, { token: bob.token })).json<Ev[]>();
    assert.ok(asMember.some((e) => e.target_title === 'secret plan'));
    const project = (await t.api('GET', `/projects/${publicId}/events`, { token: bob.token })).json<Ev[]>();
    assert.ok(!project.some((e) => e.target_title === 'hush'), 'Reporter of another project still cannot see it');
  });

  it('scope=all lists every event of the projects the caller is a member of', async () => {
    const carol = await createUser(t.app);
    await addMember(t.app, 'project', privateId, carol, 30);
    const own = (await t.api('GET', '/events', { token: carol.token })).json<Ev[]>();
    assert.ok(own.every((e) => e.target_title !== 'secret plan'));
    const all = (await t.api('GET', '/events?scope=all', { token: carol.token })).json<Ev[]>();
    assert.ok(all.some((e) => e.target_title === 'secret plan'));
    assert.ok(
      all.every((e) => e.project_id === privateId),
      'public projects she is not a member of are not included',
    );
  });

  it('a private profile gives an empty list, except to its owner', async () => {
    const shy = await createUser(t.app, { privateProfile: true });
    const project = await createProject(t.app, shy, { visibility: 'public' });
    await t.api('POST', `/projects/${project.id}/issues`, { token: shy.token, body: { title: 'quiet' } });
    const res = await t.api('GET', `/users/${shy.user.id}/events`, { token: bob.token });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), []);
    assert.equal(res.headers['x-total'], '0');
    assert.ok((await t.api('GET', `/users/${shy.user.id}/events`, { token: shy.token })).json().length > 0);
    // The project list still shows them: the profile setting is about the user's page.
    assert.ok((await t.api('GET', `/projects/${project.id}/events`, { token: bob.token })).json().length > 0);
  });

  it('merge-request and epic events are left out of user lists but not project lists', async () => {
    const db = t.app.platform.db;
    for (const type of ['MergeRequest', 'Epic']) {
      await db
        .insertInto('events')
        .values({ project_id: publicId, author_id: alice.user.id, action: 1, target_type: type, target_id: 1, created_at: Date.now() })
        .execute();
    }
    const user = (await t.api('GET', `/users/${alice.user.id}/events`, { token: alice.token })).json<Ev[]>();
    assert.ok(!user.some((e) => e.target_type === 'MergeRequest' || e.target_type === 'Epic'));
    const own = (await t.api('GET', '/events', { token: alice.token })).json<Ev[]>();
    assert.ok(!own.some((e) => e.target_type === 'MergeRequest'));
    const project = (await t.api('GET', `/projects/${publicId}/events?target_type=merge_request`, { token: alice.token })).json<Ev[]>();
    assert.equal(project.length, 1);
  });

  it('push events of a private project need Reporter', async () => {
    const guest = await createUser(t.app);
    await addMember(t.app, 'project', privateId, guest, 10);
    await t.app.platform.db.transaction().execute((trx) =>
      t.app.platform.bus.publish(
        {
          type: 'push_received',
          projectId: privateId,
          authorId: alice.user.id,
          at: Date.now(),
          refs: [
            {
              ref: 'main',
              refType: 'branch',
              action: 'pushed',
              commitFrom: 'a'.repeat(40),
              commitTo: 'b'.repeat(40),
              commitCount: 1,
              commitTitle: 'x',
            },
          ],
        },
        trx,
      ),
    );
    const asGuest = (await t.api('GET', `/projects/${privateId}/events?action=pushed`, { token: guest.token })).json();
    assert.equal(asGuest.length, 0);
    const asOwner = (await t.api('GET', `/projects/${privateId}/events?action=pushed`, { token: alice.token })).json();
    assert.equal(asOwner.length, 1);
  });
});
