import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PushedRef } from '../../src/infra/bus.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

const SHA_A = 'a'.repeat(40);
const SHA_B = 'b'.repeat(40);

function ref(partial: Partial<PushedRef> & { ref: string }): PushedRef {
  return {
    refType: 'branch',
    action: 'pushed',
    commitFrom: SHA_A,
    commitTo: SHA_B,
    commitCount: 2,
    commitTitle: 'Fix the thing',
    ...partial,
  };
}

async function push(t: TestApp, projectId: number, authorId: number, refs: PushedRef[]): Promise<void> {
  await t.app.platform.db
    .transaction()
    .execute((trx) => t.app.platform.bus.publish({ type: 'push_received', projectId, authorId, refs, at: t.clock.now() }, trx));
}

type Ev = Record<string, unknown> & { id: number; action_name: string; target_type: string | null };

describe('events: recording and entities', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));
  after(() => t.close());

  it('project created, issue opened/closed/reopened, note, snippet, member joined/left become events', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    const issue = (await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'Broken build' } })).json();
    await t.api('PUT', `/projects/${project.id}/issues/${issue.iid}`, { token: alice.token, body: { state_event: 'close' } });
    await t.api('PUT', `/projects/${project.id}/issues/${issue.iid}`, { token: alice.token, body: { state_event: 'reopen' } });
    const note = (
      await t.api('POST', `/projects/${project.id}/issues/${issue.iid}/notes`, { token: alice.token, body: { body: 'Looking' } })
    ).json();
    const snippet = await t.api('POST', `/projects/${project.id}/snippets`, {
      token: alice.token,
      body: { title: 'Config', file_name: 'a.txt', content: 'x', visibility: 'public' },
    });
    assert.equal(snippet.statusCode, 201);
    await t.api('POST', `/projects/${project.id}/members`, { token: alice.token, body: { user_id: bob.user.id, access_level: 30 } });
    await t.api('DELETE', `/projects/${project.id}/members/${bob.user.id}`, { token: alice.token });

    const res = await t.api('GET', `/projects/${project.id}/events?sort=asc`, { token: alice.token });
    assert.equal(res.statusCode, 200);
    const events = res.json<Ev[]>();
    assert.deepEqual(
      events.map((e) => [e.action_name, e.target_type]),
      [
        ['created', null],
        ['opened', 'Issue'],
        ['closed', 'Issue'],
        ['opened', 'Issue'],
        ['commented on', 'Note'],
        ['opened', 'Snippet'],
        ['joined', null],
        ['left', null],
      ],
    );
    const [created, opened, , , commented, snip, joined] = events;
    assert.deepEqual(Object.keys(created ?? {}), [
      'id',
      'title',
      'project_id',
      'action_name',
      'target_id',
      'target_iid',
      'target_type',
      'author_id',
      'target_title',
      'created_at',
      'author',
      'imported',
      'imported_from',
      'author_username',
      'data',
    ]);
    assert.equal(created?.title, null);
    assert.equal(created?.project_id, project.id);
    assert.equal(created?.imported, false);
    assert.equal(created?.imported_from, 'none');
    assert.equal(created?.author_username, alice.user.username);
    assert.deepEqual(Object.keys(created?.author as object), ['id', 'username', 'name', 'state', 'locked', 'avatar_url', 'web_url']);
    assert.match(String(created?.created_at), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(opened?.target_id, issue.id);
    assert.equal(opened?.target_iid, issue.iid);
    assert.equal(opened?.target_title, 'Broken build');
    assert.equal(commented?.target_id, note.id);
    assert.equal(commented?.target_iid, note.id);
    assert.equal(commented?.target_title, null);
    const embedded = commented?.note as Record<string, unknown>;
    assert.equal(embedded.id, note.id);
    assert.equal(embedded.body, 'Looking');
    assert.equal(embedded.system, false);
    assert.equal(embedded.noteable_id, issue.id);
    assert.equal(embedded.noteable_type, 'Issue');
    assert.equal(embedded.noteable_iid, issue.iid);
    assert.equal((embedded.author as { username: string }).username, alice.user.username);
    assert.equal(snip?.target_title, 'Config');
    assert.equal(joined?.author_id, bob.user.id);

    // On a user's list the note has no noteable_iid and there is no `data`.
    const mine = (await t.api('GET', `/users/${alice.user.id}/events?target_type=note`, { token: alice.token })).json<Ev[]>();
    assert.equal(mine.length, 1);
    assert.equal('noteable_iid' in (mine[0]?.note as object), false);
    assert.equal('data' in (mine[0] as object), false);
  });

  it('joining a group creates no event', async () => {
    const group = await createGroup(t.app, alice);
    await addMember(t.app, 'namespace', group.id, bob, 30);
    const res = await t.api('GET', `/users/${bob.user.id}/events?action=joined`, { token: bob.token });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().length, 1, 'only the project join of the test above');
  });

  it('a push records pushed new / pushed to / deleted with push_data', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await push(t, project.id, alice.user.id, [
      ref({ ref: 'refs/heads/feature', action: 'created', commitFrom: '0'.repeat(40), commitCount: 3 }),
      ref({ ref: 'refs/heads/old', action: 'removed', commitTo: '0'.repeat(40), commitCount: 0, commitTitle: null }),
      ref({ ref: 'refs/heads/main', commitTitle: `${'x'.repeat(80)}\nbody` }),
      ref({ ref: 'refs/tags/v1.0', refType: 'tag', action: 'created', commitFrom: null, commitCount: 1 }),
    ]);
    const events = (await t.api('GET', `/projects/${project.id}/events?action=pushed&sort=asc`, { token: alice.token })).json<Ev[]>();
    assert.deepEqual(
      events.map((e) => e.action_name),
      ['pushed new', 'deleted', 'pushed to', 'pushed new'],
    );
    assert.deepEqual(events[0]?.push_data, {
      commit_count: 3,
      action: 'created',
      ref_type: 'branch',
      commit_from: null,
      commit_to: SHA_B,
      ref: 'feature',
      commit_title: 'Fix the thing',
      ref_count: null,
    });
    assert.equal((events[1]?.push_data as { commit_to: unknown }).commit_to, null);
    const title = (events[2]?.push_data as { commit_title: string }).commit_title;
    assert.equal(title.length, 70);
    assert.ok(title.endsWith('...'));
    assert.deepEqual(events[3]?.push_data, {
      commit_count: 1,
      action: 'created',
      ref_type: 'tag',
      commit_from: null,
      commit_to: SHA_B,
      ref: 'v1.0',
      commit_title: 'Fix the thing',
      ref_count: null,
    });
    assert.equal(events[0]?.target_type, null);
    assert.equal(events[0]?.target_iid, null);
    assert.equal(events[0]?.target_title, null);
  });

  it('more refs of one kind than the limit (3) become one bulk event', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    const branches = Array.from({ length: 4 }, (_, i) => ref({ ref: `refs/heads/b${i}`, action: 'created', commitFrom: null }));
    const tags = Array.from({ length: 3 }, (_, i) => ref({ ref: `refs/tags/t${i}`, refType: 'tag', action: 'created', commitFrom: null }));
    await push(t, project.id, alice.user.id, [...branches, ...tags]);
    const events = (await t.api('GET', `/projects/${project.id}/events?action=pushed&sort=asc`, { token: alice.token })).json<Ev[]>();
    assert.equal(events.length, 4, 'one bulk branch event and three tag events');
    assert.equal(events[0]?.action_name, 'pushed new');
    assert.deepEqual(events[0]?.push_data, {
      commit_count: 0,
      action: 'created',
      ref_type: 'branch',
      commit_from: null,
      commit_to: null,
      ref: null,
      commit_title: null,
      ref_count: 4,
    });
    assert.deepEqual(
      events.slice(1).map((e) => (e.push_data as { ref: string }).ref),
      ['t0', 't1', 't2'],
    );
  });

  it('the event and the action commit together: a failed transaction leaves no event', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await assert.rejects(
      t.app.platform.db.transaction().execute(async (trx) => {
        await t.app.platform.bus.publish(
          { type: 'push_received', projectId: project.id, authorId: alice.user.id, refs: [ref({ ref: 'main' })], at: 1 },
          trx,
        );
        throw new Error('push rejected');
      }),
    );
    const events = (await t.api('GET', `/projects/${project.id}/events?action=pushed`, { token: alice.token })).json<Ev[]>();
    assert.equal(events.length, 0);
  });
});

describe('events: push limit from configuration', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { PUSH_EVENT_ACTIVITIES_LIMIT: '1' } });
  });
  after(() => t.close());

  it('PUSH_EVENT_ACTIVITIES_LIMIT=1 makes two removed branches one bulk event', async () => {
    const user = await createUser(t.app);
    const project = await createProject(t.app, user);
    await push(t, project.id, user.user.id, [
      ref({ ref: 'refs/heads/a', action: 'removed', commitTo: null }),
      ref({ ref: 'refs/heads/b', action: 'removed', commitTo: null }),
      ref({ ref: 'refs/heads/c' }),
    ]);
    const events = (await t.api('GET', `/projects/${project.id}/events?action=pushed&sort=asc`, { token: user.token })).json<Ev[]>();
    assert.deepEqual(
      events.map((e) => [e.action_name, (e.push_data as { ref_count: number | null }).ref_count]),
      [
        ['deleted', 2],
        ['pushed to', null],
      ],
    );
  });
});
