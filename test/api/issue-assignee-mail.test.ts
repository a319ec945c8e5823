import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.js';

const DAY = 86_400_000;

describe('reassign_issue and issue_due mail over SMTP: who receives them, per level', () => {
  let smtp: TestSmtp;
  let t: TestApp;
  let owner: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let watcher: TestUser;
  let member: TestUser;
  let quiet: TestUser;
  let customOn: TestUser;
  let customOff: TestUser;
  let projectId: number;

  before(async () => {
    smtp = await startTestSmtp();
    t = await createTestApp({ env: { SMTP_URL: smtp.url(), EMAIL_FROM: 'Basalt <basalt@basalt.test>' } });
    [owner, alice, bob, watcher, member, quiet, customOn, customOff] = (await Promise.all(
      Array.from({ length: 8 }, () => createUser(t.app)),
    )) as [TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser];
    projectId = (await createProject(t.app, owner, { visibility: 'private' })).id;
    for (const user of [alice, bob, watcher, member, quiet, customOn, customOff]) await addMember(t.app, 'project', projectId, user, 30);
    const level = (user: TestUser, body: Record<string, unknown>) =>
      t.api('PUT', `/projects/${projectId}/notification_settings`, { token: user.token, body });
    await level(bob, { level: 'mention' });
    await level(watcher, { level: 'watch' });
    await level(quiet, { level: 'disabled' });
    await level(customOn, { level: 'custom', reassign_issue: true, issue_due: true });
    await level(customOff, { level: 'custom', new_issue: true });
    await deliver();
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  async function deliver(): Promise<ReceivedMail[]> {
    const before = smtp.received.length;
    await t.app.platform.jobs.drain();
    await t.app.platform.outbox.drain();
    return smtp.received.slice(before);
  }
  const recipients = (mails: ReceivedMail[]) => mails.flatMap((m) => m.to).sort();
  const emails = (...users: TestUser[]) => users.map((u) => u.user.email).sort();
  const reasonOf = (mails: ReceivedMail[], user: TestUser) =>
    mails.find((m) => m.to.includes(user.user.email))?.headerLines.get('x-gitlab-notificationreason');
  const assign = (iid: number, ids: number[], by: TestUser) =>
    t.api('PUT', `/projects/${projectId}/issues/${iid}`, { token: by.token, body: { assignee_ids: ids } });

  let iid: number;

  it('new_issue with an assignee: the assignee takes part (reason assigned); watchers as before', async () => {
    const res = await t.api('POST', `/projects/${projectId}/issues`, {
      token: owner.token,
      body: { title: 'Payments time out', assignee_ids: [alice.user.id] },
    });
    assert.equal(res.statusCode, 201, res.body);
    iid = res.json<{ iid: number }>().iid;
    const mails = await deliver();
    assert.deepEqual(recipients(mails), emails(alice, watcher, customOff));
    assert.equal(reasonOf(mails, alice), 'assigned');
  });

  it('reassign_issue: the new assignee at mention level, the previous assignee, participants, watchers and custom with the event; never the actor', async () => {
    // alice hands the issue to bob (mention level): bob is mentioned by the assignment, alice acted.
    let res = await assign(iid, [bob.user.id], alice);
    assert.equal(res.statusCode, 200, res.body);
    let mails = await deliver();
    assert.deepEqual(recipients(mails), emails(owner, bob, watcher, customOn));
    assert.equal(reasonOf(mails, bob), 'assigned');
    assert.equal(reasonOf(mails, owner), 'participating');
    assert.equal(reasonOf(mails, watcher), 'watching');
    assert.equal(reasonOf(mails, customOn), 'subscribed');
    const mail = mails.find((m) => m.to.includes(owner.user.email))!;
    assert.ok(mail.text.includes(`changed the assignees of issue #${iid}`), mail.text);
    assert.ok(mail.text.includes(`@${bob.user.username}`), mail.text);
    assert.ok(mail.text.includes(`@${alice.user.username}`), 'the previous assignee is named');
    assert.match(mail.subject, new RegExp(`Payments time out \\(#${iid}\\)$`));
    assert.match(String(mail.headerLines.get('references')), /^<issue_\d+@basalt\.test>$/);

    // The owner takes it back from bob: bob, the previous assignee, still hears of it at mention level.
    res = await assign(iid, [owner.user.id], owner);
    mails = await deliver();
    assert.deepEqual(recipients(mails), emails(bob, watcher, customOn));

    // A member with notifications disabled who is assigned gets nothing; the same assignees again send nothing.
    res = await assign(iid, [quiet.user.id], owner);
    mails = await deliver();
    assert.deepEqual(recipients(mails), emails(watcher, customOn));
    res = await assign(iid, [quiet.user.id], owner);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await deliver(), []);
    // An edit of the title alone is no reassignment.
    await t.api('PUT', `/projects/${projectId}/issues/${iid}`, { token: owner.token, body: { title: 'Payments time out (EU)' } });
    assert.deepEqual(await deliver(), []);
  });

  it('issue_due: participants of open issues due tomorrow (the author too) and custom with the event; not watchers; once a day', async () => {
    const tomorrow = new Date(t.clock.now() + DAY).toISOString().slice(0, 10);
    const later = new Date(t.clock.now() + 2 * DAY).toISOString().slice(0, 10);
    const open = async (title: string, body: Record<string, unknown>) => {
      const res = await t.api('POST', `/projects/${projectId}/issues`, { token: owner.token, body: { title, ...body } });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<{ iid: number }>().iid;
    };
    const due = await open('Renew the certificate', { assignee_ids: [alice.user.id], due_date: tomorrow });
    await t.api('POST', `/projects/${projectId}/issues/${due}/notes`, { token: member.token, body: { body: 'On it soon.' } });
    await open('Later', { assignee_ids: [alice.user.id], due_date: later });
    const closed = await open('Done already', { assignee_ids: [alice.user.id], due_date: tomorrow });
    await t.api('PUT', `/projects/${projectId}/issues/${closed}`, { token: owner.token, body: { state_event: 'close' } });
    await deliver();

    // The daily job: scheduled at start, it runs once its time has come.
    t.manual!.advance(61_000);
    const mails = await deliver();
    assert.deepEqual(recipients(mails), emails(owner, alice, member, customOn));
    for (const mail of mails) {
      assert.ok(mail.text.includes(`Issue #${due} is due on ${tomorrow}: Renew the certificate`), mail.text);
      assert.match(mail.subject, new RegExp(`Renew the certificate \\(#${due}\\)$`));
    }
    assert.equal(reasonOf(mails, customOn), 'subscribed');
    // A rerun the same day sends nothing twice.
    await t.app.modules.notifications.remindDueIssues(t.clock.now());
    assert.deepEqual(await deliver(), []);
    // The next run is at 00:50 UTC, a day at most away.
    t.manual!.advance(DAY);
    const next = await deliver();
    assert.deepEqual(recipients(next), emails(owner, alice, customOn), 'the day after: the issue that was due in two days');
    assert.ok(next.every((m) => m.text.includes('Later')));
  });
});
