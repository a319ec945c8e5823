import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

const CORE = [
  'new_release',
  'new_note',
  'new_issue',
  'reopen_issue',
  'close_issue',
  'reassign_issue',
  'issue_due',
  'new_merge_request',
  'push_to_merge_request',
  'reopen_merge_request',
  'close_merge_request',
  'reassign_merge_request',
  'change_reviewer_merge_request',
  'merge_merge_request',
  'failed_pipeline',
  'fixed_pipeline',
  'success_pipeline',
  'moved_project',
  'merge_when_pipeline_succeeds',
];

describe('notification settings API', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));
  after(() => t.close());

  it('the global setting defaults to participating with the primary email, and the first read saves it', async () => {
    const before = await t.app.platform.db.selectFrom('notification_settings').selectAll().where('user_id', '=', alice.user.id).execute();
    assert.equal(before.length, 0);
    const res = await t.api('GET', '/notification_settings', { token: alice.token });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { level: 'participating', notification_email: alice.user.email });
    const saved = await t.app.platform.db.selectFrom('notification_settings').selectAll().where('user_id', '=', alice.user.id).execute();
    assert.equal(saved.length, 1);
    assert.equal(saved[0]?.level, 'participating');
  });

  it('needs a signed-in user', async () => {
    for (const [method, url] of [
      ['GET', '/notification_settings'],
      ['PUT', '/notification_settings'],
      ['GET', '/projects/1/notification_settings'],
    ] as const) {
      const res = await t.api(method, url, { token: null });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { message: '401 Unauthorized' });
    }
  });

  it('PUT changes the global level to each of the six levels (200, not 201)', async () => {
    for (const level of ['disabled', 'participating', 'watch', 'global', 'mention', 'custom']) {
      const res = await t.api('PUT', '/notification_settings', { token: alice.token, body: { level } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().level, level);
      assert.equal(res.json().notification_email, alice.user.email);
    }
    // SPEC: `events` only for group and project settings; the global one is {level, notification_email}.
    const custom = await t.api('GET', '/notification_settings', { token: alice.token });
    assert.deepEqual(custom.json(), { level: 'custom', notification_email: alice.user.email });
  });

  it('a level nested thousands deep is 400, not a 500', async () => {
    // Sent as text: serialising it in the test would overflow the test's own stack.
    const res = await t.app.inject({
      method: 'PUT',
      url: '/api/v4/notification_settings',
      headers: { 'private-token': alice.token, 'content-type': 'application/json' },
      payload: `{"level":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    });
    assert.equal(res.statusCode, 400, res.body.slice(0, 200));
  });

  it('an unknown level is 400 with the message naming it', async () => {
    const res = await t.api('PUT', '/notification_settings', { token: alice.token, body: { level: 'loud' } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: "'loud' is not a valid level" });
  });

  it('notification_email must be a verified email of the user', async () => {
    const unknown = await t.api('PUT', '/notification_settings', { token: alice.token, body: { notification_email: 'nope@example.com' } });
    assert.equal(unknown.statusCode, 400);
    assert.deepEqual(unknown.json(), { message: { notification_email: ['must be an email you have verified'] } });
    await t.app.modules.notifications.service.addEmail(alice.user.id, 'unconfirmed@example.com', false);
    const unconfirmed = await t.api('PUT', '/notification_settings', {
      token: alice.token,
      body: { notification_email: 'unconfirmed@example.com' },
    });
    assert.equal(unconfirmed.statusCode, 400);
    await t.app.modules.notifications.service.addEmail(alice.user.id, 'work@example.com', true);
    const ok = await t.api('PUT', '/notification_settings', {
      token: alice.token,
      body: { notification_email: 'work@example.com', level: 'watch' },
    });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { level: 'watch', notification_email: 'work@example.com' });
    const read = await t.api('GET', '/notification_settings', { token: alice.token });
    assert.equal(read.json().notification_email, 'work@example.com');
    // A blank value goes back to the primary email.
    const cleared = await t.api('PUT', '/notification_settings', { token: alice.token, body: { notification_email: '' } });
    assert.equal(cleared.json().notification_email, alice.user.email);
  });

  it('a rejected email leaves the level unchanged', async () => {
    await t.api('PUT', '/notification_settings', { token: alice.token, body: { level: 'watch' } });
    const res = await t.api('PUT', '/notification_settings', {
      token: alice.token,
      body: { level: 'disabled', notification_email: 'x@y.z' },
    });
    assert.equal(res.statusCode, 400);
    assert.equal((await t.api('GET', '/notification_settings', { token: alice.token })).json().level, 'watch');
  });

  it('project setting: default global and not saved by GET; PUT saves; events only for custom', async () => {
    const project = await createProject(t.app, alice);
    const first = await t.api('GET', `/projects/${project.id}/notification_settings`, { token: alice.token });
    assert.equal(first.statusCode, 200);
    assert.deepEqual(first.json(), { level: 'global' });
    const rows = await t.app.platform.db
      .selectFrom('notification_settings')
      .selectAll()
      .where('source_kind', '=', 'project')
      .where('source_id', '=', project.id)
      .execute();
    assert.equal(rows.length, 0);

    const watch = await t.api('PUT', `/projects/${project.id}/notification_settings`, {
      token: alice.token,
      body: { level: 'watch', new_note: true },
    });
    assert.equal(watch.statusCode, 200);
    assert.deepEqual(watch.json(), { level: 'watch' });

    const custom = await t.api('PUT', `/projects/${encodeURIComponent(project.full_path)}/notification_settings`, {
      token: alice.token,
      body: { level: 'custom', new_issue: 'false', close_issue: 'true', reopen_issue: null },
    });
    assert.equal(custom.statusCode, 200);
    const events = custom.json().events;
    assert.deepEqual(Object.keys(events), [...CORE, 'approver']);
    assert.equal(events.new_note, true);
    assert.equal(events.new_issue, false);
    assert.equal(events.close_issue, true);
    assert.equal(events.reopen_issue, null);
    assert.equal(events.merge_merge_request, null);
  });

  it('every event name is accepted as a boolean in its many spellings, in the query string too', async () => {
    const group = await createGroup(t.app, alice);
    const truthy = ['true', 'TRUE', 'True', '1', 'yes', 'on', 't', 'Y'];
    const falsy = ['false', 'FALSE', 'False', '0', 'no', 'off', 'f', 'N'];
    const names = [...CORE, 'new_epic'];
    const body: Record<string, string | boolean> = { level: 'custom' };
    names.forEach((name, i) => {
      body[name] = i % 2 === 0 ? (truthy[i % truthy.length] as string) : (falsy[i % falsy.length] as string);
    });
    const res = await t.api('PUT', `/groups/${group.id}/notification_settings`, { token: alice.token, body });
    assert.equal(res.statusCode, 200);
    const events = res.json().events;
    assert.deepEqual(Object.keys(events), names);
    names.forEach((name, i) => assert.equal(events[name], i % 2 === 0, name));

    const viaQuery = await t.api('PUT', `/groups/${group.id}/notification_settings?new_note=false&level=custom`, { token: alice.token });
    assert.equal(viaQuery.statusCode, 200);
    assert.equal(viaQuery.json().events.new_note, false);
  });

  it('a value that is not a boolean is 400 naming the event', async () => {
    const project = await createProject(t.app, alice);
    for (const value of ['maybe', 2, 'tRuE', {}]) {
      const res = await t.api('PUT', `/projects/${project.id}/notification_settings`, { token: alice.token, body: { new_note: value } });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { message: 'new_note is invalid' });
    }
  });

  it('a group or project the caller cannot read is 404', async () => {
    const group = await createGroup(t.app, alice, { visibility: 'private' });
    const project = await createProject(t.app, alice, { visibility: 'private' });
    const g = await t.api('GET', `/groups/${group.id}/notification_settings`, { token: bob.token });
    assert.equal(g.statusCode, 404);
    assert.deepEqual(g.json(), { message: '404 Group Not Found' });
    const gp = await t.api('PUT', `/groups/${group.id}/notification_settings`, { token: bob.token, body: { level: 'watch' } });
    assert.equal(gp.statusCode, 404);
    const p = await t.api('PUT', `/projects/${project.id}/notification_settings`, { token: bob.token, body: { level: 'watch' } });
    assert.equal(p.statusCode, 404);
    assert.deepEqual(p.json(), { message: '404 Project Not Found' });
    const missing = await t.api('GET', '/projects/999999/notification_settings', { token: bob.token });
    assert.equal(missing.statusCode, 404);
  });

  it('a public project needs no membership to keep a setting', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    const res = await t.api('PUT', `/projects/${project.id}/notification_settings`, { token: bob.token, body: { level: 'disabled' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { level: 'disabled' });
  });

  it('unknown keys are ignored', async () => {
    const project = await createProject(t.app, alice);
    const res = await t.api('PUT', `/projects/${project.id}/notification_settings`, {
      token: alice.token,
      body: { level: 'mention', colour: 'blue' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { level: 'mention' });
  });
});

describe('notification settings on the free tier', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { BASALT_TIER: 'free' } });
  });
  after(() => t.close());

  it('new_epic is refused and not listed', async () => {
    const user = await createUser(t.app);
    const group = await createGroup(t.app, user);
    const refused = await t.api('PUT', `/groups/${group.id}/notification_settings`, { token: user.token, body: { new_epic: true } });
    assert.equal(refused.statusCode, 400);
    assert.equal(typeof refused.json().message, 'string');
    const custom = await t.api('PUT', `/groups/${group.id}/notification_settings`, { token: user.token, body: { level: 'custom' } });
    assert.deepEqual(Object.keys(custom.json().events), CORE);
    const global = await t.api('PUT', '/notification_settings', { token: user.token, body: { level: 'custom' } });
    assert.deepEqual(Object.keys(global.json()), ['level', 'notification_email']);
  });
});

describe('effective level and recipients', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('project setting, then nearest non-global group, then global', async () => {
    const owner = await createUser(t.app);
    const user = await createUser(t.app);
    const top = await createGroup(t.app, owner);
    const sub = await createGroup(t.app, owner, { parentId: top.id });
    const project = await createProject(t.app, owner, { namespaceId: sub.id });
    await addMember(t.app, 'namespace', top.id, user, 30);
    const svc = t.app.modules.notifications.service;
    assert.equal(await svc.effectiveLevel(user.user.id, project.id), 'participating');

    await t.api('PUT', '/notification_settings', { token: user.token, body: { level: 'mention' } });
    assert.equal(await svc.effectiveLevel(user.user.id, project.id), 'mention');

    await t.api('PUT', `/groups/${top.id}/notification_settings`, { token: user.token, body: { level: 'watch' } });
    assert.equal(await svc.effectiveLevel(user.user.id, project.id), 'watch');
    // A global-level setting on the nearer group is skipped.
    await t.api('PUT', `/groups/${sub.id}/notification_settings`, { token: user.token, body: { level: 'global' } });
    assert.equal(await svc.effectiveLevel(user.user.id, project.id), 'watch');
    await t.api('PUT', `/groups/${sub.id}/notification_settings`, { token: user.token, body: { level: 'disabled' } });
    assert.equal(await svc.effectiveLevel(user.user.id, project.id), 'disabled');

    await t.api('PUT', `/projects/${project.id}/notification_settings`, { token: user.token, body: { level: 'custom', new_issue: true } });
    assert.equal(await svc.effectiveLevel(user.user.id, project.id), 'custom');
    assert.equal(await svc.notifies(user.user.id, project.id, 'new_issue'), true);
    assert.equal(await svc.notifies(user.user.id, project.id, 'close_issue'), false);
    // Unset pipeline failure reads as on.
    assert.equal(await svc.notifies(user.user.id, project.id, 'failed_pipeline'), true);
    assert.equal(await svc.notifies(user.user.id, project.id, 'close_issue', { participant: true }), true);
  });

  it('notifies by level: watch, participating, mention, disabled', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    const svc = t.app.modules.notifications.service;
    const set = (level: string) => t.api('PUT', `/projects/${project.id}/notification_settings`, { token: owner.token, body: { level } });
    await set('watch');
    assert.equal(await svc.notifies(owner.user.id, project.id, 'new_issue'), true);
    assert.equal(await svc.notifies(owner.user.id, project.id, 'success_pipeline'), false);
    await set('participating');
    assert.equal(await svc.notifies(owner.user.id, project.id, 'new_issue'), false);
    assert.equal(await svc.notifies(owner.user.id, project.id, 'new_issue', { participant: true }), true);
    assert.equal(await svc.notifies(owner.user.id, project.id, 'failed_pipeline'), true);
    await set('mention');
    assert.equal(await svc.notifies(owner.user.id, project.id, 'new_issue', { participant: true }), false);
    assert.equal(await svc.notifies(owner.user.id, project.id, 'new_issue', { mentioned: [owner.user.id] }), true);
    await set('disabled');
    assert.equal(await svc.notifies(owner.user.id, project.id, 'failed_pipeline'), false);
  });

  it('recipients are the members, direct or inherited, whose level asks for the event', async () => {
    const owner = await createUser(t.app);
    const group = await createGroup(t.app, owner);
    const project = await createProject(t.app, owner, { namespaceId: group.id });
    const direct = await createUser(t.app);
    const inherited = await createUser(t.app);
    const quiet = await createUser(t.app);
    const outsider = await createUser(t.app);
    await addMember(t.app, 'project', project.id, direct, 30);
    await addMember(t.app, 'namespace', group.id, inherited, 20);
    await addMember(t.app, 'project', project.id, quiet, 30);
    const svc = t.app.modules.notifications.service;
    assert.deepEqual(await svc.recipients(project.id, 'new_issue'), []);

    await t.api('PUT', `/projects/${project.id}/notification_settings`, { token: direct.token, body: { level: 'watch' } });
    await t.api('PUT', `/groups/${group.id}/notification_settings`, { token: inherited.token, body: { level: 'custom', new_issue: true } });
    await t.api('PUT', '/notification_settings', { token: quiet.token, body: { level: 'disabled' } });
    await t.api('PUT', '/notification_settings', { token: outsider.token, body: { level: 'watch' } });
    assert.deepEqual(
      await svc.recipients(project.id, 'new_issue'),
      [direct.user.id, inherited.user.id].sort((a, b) => a - b),
    );
    assert.deepEqual(await svc.recipients(project.id, 'close_issue'), [direct.user.id]);
    // The owner (participating) is included when they took part.
    assert.deepEqual(
      await svc.recipients(project.id, 'close_issue', { participants: [owner.user.id] }),
      [owner.user.id, direct.user.id].sort((a, b) => a - b),
    );
    const emails = await svc.notificationEmails([direct.user.id]);
    assert.equal(emails.get(direct.user.id), direct.user.email);
    // A blocked member gets nothing.
    await t.app.modules.identity.users.setState(direct.user.id, 'blocked');
    assert.deepEqual(await svc.recipients(project.id, 'close_issue'), []);
  });
});
