import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Gitlab } from '@gitbeaker/rest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';

describe('gitbeaker NotificationSettings and Events against a listening server', () => {
  let t: TestApp;
  let alice: TestUser;
  let url: string;
  before(async () => {
    t = await createTestApp({ manualClock: false });
    alice = await createUser(t.app);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  after(() => t.close());

  it('reads and edits global, group and project notification settings', async () => {
    const api = new Gitlab({ host: url, token: alice.token });
    const global = await api.NotificationSettings.show();
    assert.deepEqual(global, { level: 'participating', notification_email: alice.user.email });
    const edited = await api.NotificationSettings.edit({ level: 'watch' });
    assert.equal(edited.level, 'watch');

    const group = await api.Groups.create('Notify Group', 'notify-group');
    const project = await api.Projects.create({ name: 'Bell', path: 'bell', namespaceId: group.id });
    assert.deepEqual(await api.NotificationSettings.show({ projectId: project.id }), { level: 'global' });
    const custom = await api.NotificationSettings.edit({
      projectId: 'notify-group/bell',
      level: 'custom',
      newIssue: true,
      closeIssue: false,
    });
    assert.equal(custom.level, 'custom');
    const events = custom.events as Record<string, boolean | null>;
    assert.equal(events.new_issue, true);
    assert.equal(events.close_issue, false);
    assert.equal(events.new_note, null);
    const groupSetting = await api.NotificationSettings.edit({ groupId: group.id, level: 'mention' });
    assert.deepEqual(groupSetting, { level: 'mention' });
    assert.equal(await t.app.modules.notifications.service.effectiveLevel(alice.user.id, project.id), 'custom');

    await assert.rejects(api.NotificationSettings.edit({ level: 'shouting' }), (error: Error & { cause?: { response?: Response } }) => {
      assert.equal(error.cause?.response?.status, 400);
      return true;
    });
  });

  it('lists user and project events with filters and follows pages', async () => {
    const api = new Gitlab({ host: url, token: alice.token });
    const project = await createProject(t.app, alice, { visibility: 'public' });
    for (let i = 0; i < 5; i += 1) await api.Issues.create(project.id, `Issue ${i}`);
    await t.app.platform.db.transaction().execute((trx) =>
      t.app.platform.bus.publish(
        {
          type: 'push_received',
          projectId: project.id,
          authorId: alice.user.id,
          at: Date.now(),
          refs: [
            {
              ref: 'refs/heads/main',
              refType: 'branch',
              action: 'pushed',
              commitFrom: 'a'.repeat(40),
              commitTo: 'b'.repeat(40),
              commitCount: 2,
              commitTitle: 'Ship it',
            },
          ],
        },
        trx,
      ),
    );

    const projectEvents = await api.Events.all({ projectId: project.id, targetType: 'issue', perPage: 2, maxPages: 10 });
    assert.equal(projectEvents.length, 5, 'gitbeaker followed the Link headers across 3 pages');
    assert.ok(projectEvents.every((e) => e.action_name === 'opened' && e.target_type === 'Issue'));

    const pushes = await api.Events.all({ projectId: project.id, action: 'pushed' });
    assert.equal(pushes.length, 1);
    assert.equal(pushes[0]?.action_name, 'pushed to');
    assert.deepEqual((pushes[0] as { push_data?: { ref: string; commit_count: number } }).push_data?.ref, 'main');

    const mine = await api.Events.all({ sort: 'asc', action: 'created' });
    assert.ok(mine.length >= 6);
    assert.ok(mine.every((e) => e.author_id === alice.user.id));

    const anonymous = new Gitlab({ host: url });
    const theirs = await anonymous.Events.all({ userId: alice.user.username, targetType: 'issue' });
    assert.equal(theirs.length, 5);
    const future = await api.Events.all({ userId: alice.user.id, after: '2999-01-01' });
    assert.deepEqual(future, []);
  });
});
