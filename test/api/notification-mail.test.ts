import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.js';

describe('notification e-mail over SMTP (STARTTLS, AUTH): who receives what, with which headers', () => {
  let smtp: TestSmtp;
  let t: TestApp;
  let owner: TestUser;
  let dev: TestUser;
  let watcher: TestUser;
  let mentionOnly: TestUser;
  let quiet: TestUser;
  let custom: TestUser;
  let blocked: TestUser;
  let outsider: TestUser;
  let projectId: number;
  let projectPath: string;
  /** What the setup sent: each user's "new personal access token" mail. */
  let setupMails: ReceivedMail[] = [];

  before(async () => {
    smtp = await startTestSmtp({ starttls: true, auth: { user: 'mailer', pass: 's3cret p@ss' } });
    t = await createTestApp({
      env: { SMTP_URL: smtp.url(), EMAIL_FROM: 'Basalt <basalt@basalt.test>', EMAIL_REPLY_TO: 'noreply@basalt.test' },
    });
    [owner, dev, watcher, mentionOnly, quiet, custom, blocked, outsider] = (await Promise.all(
      Array.from({ length: 8 }, () => createUser(t.app)),
    )) as [TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser];
    const project = await createProject(t.app, owner, { visibility: 'private' });
    projectId = project.id;
    projectPath = project.full_path;
    for (const member of [dev, watcher, mentionOnly, quiet, custom, blocked]) await addMember(t.app, 'project', projectId, member, 30);
    const level = (user: TestUser, body: Record<string, unknown>) =>
      t.api('PUT', `/projects/${projectId}/notification_settings`, { token: user.token, body });
    await level(watcher, { level: 'watch' });
    await level(mentionOnly, { level: 'mention' });
    await level(quiet, { level: 'disabled' });
    await level(custom, { level: 'custom', new_note: true });
    await level(blocked, { level: 'watch' });
    assert.equal((await t.api('POST', `/users/${blocked.user.id}/block`)).statusCode, 201);
    setupMails = await deliver();
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  /** Runs the dispatch jobs and sends the outbox; returns the mails this step delivered. */
  async function deliver(): Promise<ReceivedMail[]> {
    const before = smtp.received.length;
    await t.app.platform.jobs.drain();
    await t.app.platform.outbox.drain();
    return smtp.received.slice(before);
  }
  const to = (mails: ReceivedMail[], user: TestUser) => mails.filter((m) => m.to.includes(user.user.email));
  const recipients = (mails: ReceivedMail[]) => mails.flatMap((m) => m.to).sort();
  const emails = (...users: TestUser[]) => users.map((u) => u.user.email).sort();

  let iid: number;

  it('new_issue: watchers and mentioned members; not the author, a participating member, disabled, blocked or a mentioned outsider who cannot see the project', async () => {
    const res = await t.api('POST', `/projects/${projectId}/issues`, {
      token: owner.token,
      body: {
        title: 'Checkout <fails>',
        description: `Hi @${mentionOnly.user.username} and @${outsider.user.username}, see \`@${quiet.user.username}\`.`,
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    iid = res.json<{ iid: number }>().iid;
    const mails = await deliver();
    assert.deepEqual(recipients(mails), emails(watcher, mentionOnly));
    const [watched] = to(mails, watcher);
    const [mentioned] = to(mails, mentionOnly);
    assert.equal(watched?.headerLines.get('x-gitlab-notificationreason'), 'watching');
    assert.equal(mentioned?.headerLines.get('x-gitlab-notificationreason'), 'mentioned');

    const mail = watched;
    assert.equal(mail.subject, `${projectPath.split('/').pop()} | Checkout <fails> (#${iid})`);
    assert.equal(mail.from, 'basalt@basalt.test');
    assert.match(String(mail.headerLines.get('reply-to')), /noreply@basalt\.test/);
    assert.match(String(mail.headerLines.get('list-id')), new RegExp(`^${projectPath} <${projectId}\\.[^>]+\\.basalt\\.test>$`));
    assert.match(String(mail.headerLines.get('list-unsubscribe')), /^<http:\/\/basalt\.test\/-\/notifications\/unsubscribe\/[^>]+>$/);
    assert.equal(mail.headerLines.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
    assert.equal(mail.headerLines.get('x-gitlab-project-id'), String(projectId));
    assert.match(mail.messageId, /^<.+@basalt\.test>$/);
    // Both parts from one template: the same facts, the HTML escaped.
    const link = `http://basalt.test/${projectPath}/-/issues/${iid}`;
    assert.ok(mail.text.includes(`opened issue #${iid}: Checkout <fails>`), mail.text);
    assert.ok(mail.text.includes(link));
    assert.ok(mail.html.includes(`opened issue #${iid}: Checkout &lt;fails&gt;`), mail.html);
    assert.ok(mail.html.includes(`href="${link}"`));
    // The session was encrypted with STARTTLS and authenticated.
    assert.equal(mail.secure, true);
    assert.equal(mail.user, 'mailer');
  });

  it('new_note: the issue author (participating), watchers and custom new_note; never the commenter', async () => {
    const res = await t.api('POST', `/projects/${projectId}/issues/${iid}/notes`, {
      token: dev.token,
      body: { body: 'Reproduced **here**.' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const mails = await deliver();
    assert.deepEqual(recipients(mails), emails(owner, watcher, custom));
    assert.equal(to(mails, owner)[0]?.headerLines.get('x-gitlab-notificationreason'), 'participating');
    assert.equal(to(mails, custom)[0]?.headerLines.get('x-gitlab-notificationreason'), 'subscribed');
    assert.ok(to(mails, owner)[0]?.text.includes('Reproduced **here**.'));
    assert.match(String(to(mails, owner)[0]?.headerLines.get('references')), /^<issue_\d+@basalt\.test>$/);
  });

  it('close_issue and reopen_issue: commenters now take part; custom without the event does not get it', async () => {
    await t.api('PUT', `/projects/${projectId}/issues/${iid}`, { token: owner.token, body: { state_event: 'close' } });
    let mails = await deliver();
    assert.deepEqual(recipients(mails), emails(dev, watcher));
    assert.ok(mails[0]?.text.includes(`Issue #${iid} was closed by`));
    await t.api('PUT', `/projects/${projectId}/issues/${iid}`, { token: dev.token, body: { state_event: 'reopen' } });
    mails = await deliver();
    assert.deepEqual(recipients(mails), emails(owner, watcher));
  });

  it('a mentioned outsider receives mail once the project is public', async () => {
    await t.api('PUT', `/projects/${projectId}`, { body: { visibility: 'public' } });
    await t.api('POST', `/projects/${projectId}/issues/${iid}/notes`, {
      token: owner.token,
      body: { body: `@${outsider.user.username} FYI` },
    });
    const mails = await deliver();
    assert.deepEqual(to(mails, outsider).length, 1);
    assert.equal(to(mails, outsider)[0]?.headerLines.get('x-gitlab-notificationreason'), 'mentioned');
  });

  it('one-click unsubscribe: a POST without credentials sets that project to disabled and nothing else', async () => {
    const last = [...smtp.received].reverse().find((m) => m.to.includes(watcher.user.email)) as ReceivedMail;
    const url = new URL(String(last.headerLines.get('list-unsubscribe')).slice(1, -1));
    const shown = await t.app.inject({ method: 'GET', url: url.pathname });
    assert.equal(shown.statusCode, 200);
    assert.match(shown.body, /<form method="post"/);
    assert.equal(
      (await t.api('GET', `/projects/${projectId}/notification_settings`, { token: watcher.token })).json().level,
      'watch',
      'a GET changes nothing',
    );

    const forged = await t.app.inject({
      method: 'POST',
      url: `${url.pathname.slice(0, -3)}AAA`,
      payload: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(forged.statusCode, 404);
    const res = await t.app.inject({
      method: 'POST',
      url: url.pathname,
      payload: 'List-Unsubscribe=One-Click',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await t.api('GET', `/projects/${projectId}/notification_settings`, { token: watcher.token })).json().level, 'disabled');
    assert.equal(
      (await t.api('GET', '/notification_settings', { token: watcher.token })).json().level,
      'participating',
      'the global level is untouched',
    );

    await t.api('POST', `/projects/${projectId}/issues/${iid}/notes`, { token: owner.token, body: { body: 'After unsubscribe' } });
    assert.equal(to(await deliver(), watcher).length, 0);
  });

  it('account mails, whatever the level: a new personal access token, a changed password', async () => {
    const tokenMails = setupMails.filter((m) => m.subject === 'A new personal access token has been created');
    assert.ok(to(tokenMails, quiet).length === 1, 'sent even with notifications disabled');
    assert.match(to(tokenMails, quiet)[0]?.text ?? '', /named "test" was created for your account @/);
    assert.match(to(tokenMails, quiet)[0]?.text ?? '', /Scopes: api/);
    assert.equal(to(tokenMails, quiet)[0]?.headerLines.get('list-unsubscribe'), undefined, 'account mails have no list to leave');

    const res = await t.api('PUT', `/users/${dev.user.id}`, { body: { password: 'a-new-password-456' } });
    assert.equal(res.statusCode, 200, res.body);
    const mails = await deliver();
    assert.deepEqual(recipients(mails), emails(dev));
    assert.equal(mails[0]?.subject, 'Password changed');
    assert.match(mails[0]?.html ?? '', /The password of your account @/);
  });

  it('a personal token expiring within 7 days is reminded of once; one expiring later is not', async () => {
    const day = (n: number) => new Date(t.clock.now() + n * 86_400_000).toISOString().slice(0, 10);
    const soon = await t.api('POST', `/users/${dev.user.id}/personal_access_tokens`, {
      body: { name: 'ci-soon', scopes: ['api'], expires_at: day(3) },
    });
    assert.equal(soon.statusCode, 201, soon.body);
    await t.api('POST', `/users/${dev.user.id}/personal_access_tokens`, {
      body: { name: 'ci-later', scopes: ['api'], expires_at: day(30) },
    });
    await deliver();
    await t.app.modules.notifications.remindExpiringTokens(t.clock.now());
    const mails = await deliver();
    const reminders = mails.filter((m) => m.subject === 'Your personal access token will expire in 7 days or less');
    assert.deepEqual(recipients(reminders), emails(dev));
    assert.match(reminders[0]?.text ?? '', new RegExp(`"ci-soon" .* expires on ${day(3)}`));
    await t.app.modules.notifications.remindExpiringTokens(t.clock.now() + 86_400_000);
    assert.equal((await deliver()).length, 0, 'once per token');
  });

  it('metrics count the sent mails per kind', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/-/metrics', remoteAddress: '127.0.0.1' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /basalt_outbox_items\{kind="email",state="sent"\} [1-9]\d*/);
    assert.match(res.body, /basalt_outbox_items\{kind="email",state="dead"\} 0/);
  });
});

describe('notification e-mail while the mail server is down', () => {
  it('issue creation keeps working; the mail waits in the outbox and goes out when the server returns', async () => {
    let smtp = await startTestSmtp();
    const port = smtp.port;
    await smtp.close();
    const t = await createTestApp({ env: { SMTP_URL: `smtp://127.0.0.1:${port}`, EMAIL_FROM: 'basalt@basalt.test' } });
    try {
      const owner = await createUser(t.app);
      const watcher = await createUser(t.app);
      const project = await createProject(t.app, owner);
      await addMember(t.app, 'project', project.id, watcher, 30);
      await t.api('PUT', `/projects/${project.id}/notification_settings`, { token: watcher.token, body: { level: 'watch' } });
      const started = Date.now();
      for (let i = 0; i < 5; i += 1) {
        const res = await t.api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: `Down ${i}` } });
        assert.equal(res.statusCode, 201);
      }
      assert.ok(Date.now() - started < 5_000, 'issue creation does not wait for mail');
      await t.app.platform.jobs.drain();
      await t.app.platform.outbox.drain();
      const waiting = (await t.app.platform.outbox.counts()).filter((c) => c.kind === 'email');
      assert.deepEqual(
        waiting.map((c) => c.state),
        ['failed'],
        'every mail (the issues and the setup tokens) waits for a retry',
      );

      smtp = await startTestSmtp({ port });
      t.manual?.advance(40_000);
      await t.app.platform.outbox.drain();
      assert.deepEqual(
        smtp.received
          .map((m) => m.subject)
          .filter((subject) => subject.startsWith(project.path))
          .sort(),
        [0, 1, 2, 3, 4].map((i) => `${project.path} | Down ${i} (#${i + 1})`),
      );
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
