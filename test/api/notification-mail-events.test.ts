import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { queuedMails } from '../helpers/mail.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { enableTracking, exceptionEvent, hex32, post, sentryAuth, storePath } from '../helpers/sentry.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.js';

/**
 * The mails of a moved project, a sign-in from a new address and new or regressed errors,
 * received by a real SMTP server (smtp-server on 127.0.0.1).
 */
describe('moved project, new sign-in address and error mails over SMTP', () => {
  let smtp: TestSmtp;
  let t: TestApp;
  let owner: TestUser;
  let maintainer: TestUser;
  let developer: TestUser;
  let watcher: TestUser;
  let mentionOnly: TestUser;
  let quiet: TestUser;
  let customMove: TestUser;
  let customOther: TestUser;
  let blocked: TestUser;
  let outsider: TestUser;
  let projectId: number;
  let projectName: string;
  let projectPath: string;

  before(async () => {
    smtp = await startTestSmtp();
    t = await createTestApp({ env: { SMTP_URL: smtp.url(), EMAIL_FROM: 'Basalt <basalt@basalt.test>' } });
    [owner, maintainer, developer, watcher, mentionOnly, quiet, customMove, customOther, blocked, outsider] = (await Promise.all(
      Array.from({ length: 10 }, () => createUser(t.app)),
    )) as [TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser, TestUser];
    const project = await createProject(t.app, owner, { visibility: 'private' });
    projectId = project.id;
    projectName = project.name;
    projectPath = project.full_path;
    await addMember(t.app, 'project', projectId, maintainer, 40);
    await addMember(t.app, 'project', projectId, developer, 30);
    await addMember(t.app, 'project', projectId, watcher, 30);
    for (const member of [mentionOnly, quiet, customMove, customOther, blocked]) await addMember(t.app, 'project', projectId, member, 40);
    const level = (user: TestUser, body: Record<string, unknown>) =>
      t.api('PUT', `/projects/${projectId}/notification_settings`, { token: user.token, body });
    await level(watcher, { level: 'watch' });
    await level(mentionOnly, { level: 'mention' });
    await level(quiet, { level: 'disabled' });
    await level(customMove, { level: 'custom', moved_project: true });
    await level(customOther, { level: 'custom', new_note: true });
    await level(blocked, { level: 'watch' });
    assert.equal((await t.api('POST', `/users/${blocked.user.id}/block`)).statusCode, 201);
    await deliver();
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  /** Runs the queued jobs and sends the outbox; returns the mails this step delivered. */
  async function deliver(): Promise<ReceivedMail[]> {
    const before = smtp.received.length;
    await t.app.platform.jobs.drain();
    await t.app.platform.outbox.drain();
    return smtp.received.slice(before);
  }
  const recipients = (mails: ReceivedMail[]) => mails.flatMap((m) => m.to).sort();
  const emails = (...users: TestUser[]) => users.map((u) => u.user.email).sort();
  const to = (mails: ReceivedMail[], user: TestUser) => mails.find((m) => m.to.includes(user.user.email));

  describe('moved_project', () => {
    it('a new path mails the members whose level asks for it (participating, watch, custom with the event), with the old and new path', async () => {
      const oldPath = projectPath;
      const res = await t.api('PUT', `/projects/${projectId}`, { token: owner.token, body: { path: `moved-${projectId}` } });
      assert.equal(res.statusCode, 200, res.body);
      projectPath = res.json<{ path_with_namespace: string }>().path_with_namespace;
      assert.notEqual(projectPath, oldPath);
      const mails = await deliver();
      // Not: mention-only, disabled, custom without moved_project, blocked, outsiders.
      assert.deepEqual(recipients(mails), emails(owner, maintainer, developer, watcher, customMove));
      const mail = to(mails, maintainer) as ReceivedMail;
      assert.equal(mail.subject, `${projectName} | Project was moved`);
      assert.equal(mail.from, 'basalt@basalt.test');
      assert.ok(mail.text.includes(`Project ${oldPath} was moved to ${projectPath}.`), mail.text);
      assert.ok(mail.text.includes(`git remote set-url origin http://basalt.test/${projectPath}.git`), mail.text);
      assert.ok(mail.html.includes(`Project ${oldPath} was moved to ${projectPath}.`), mail.html);
      assert.ok(mail.html.includes(`href="http://basalt.test/${projectPath}"`), mail.html);
      assert.match(String(mail.headerLines.get('list-id')), new RegExp(`^${projectPath} <${projectId}\\.[^>]+\\.basalt\\.test>$`));
      assert.match(String(mail.headerLines.get('list-unsubscribe')), /^<http:\/\/basalt\.test\/-\/notifications\/unsubscribe\/[^>]+>$/);
      assert.equal(mail.headerLines.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
      assert.equal(mail.headerLines.get('x-gitlab-project-path'), projectPath);
      assert.equal(mail.headerLines.get('x-gitlab-notificationreason'), 'participating');
      assert.equal(to(mails, watcher)?.headerLines.get('x-gitlab-notificationreason'), 'watching');
      assert.equal(to(mails, customMove)?.headerLines.get('x-gitlab-notificationreason'), 'subscribed');
    });

    it('a change that keeps the path (name, description) mails nobody', async () => {
      const res = await t.api('PUT', `/projects/${projectId}`, {
        token: owner.token,
        body: { name: `Renamed ${projectId}`, description: 'x' },
      });
      assert.equal(res.statusCode, 200, res.body);
      projectName = `Renamed ${projectId}`;
      assert.deepEqual(await deliver(), []);
    });
  });

  describe('sign-in from a new address', () => {
    const signIn = async (user: TestUser, ip: string) => {
      const res = await new TestBrowser(t.app, ip).signIn(user.user.username, 'password-123');
      assert.equal(res.statusCode, 303, res.body);
    };

    it('the first sign-in mails nobody, a known address neither, a new one mails the user whatever their level; a failed one never', async () => {
      // The user's global level is disabled: account mails do not follow the levels.
      await t.api('PUT', '/notification_settings', { token: developer.token, body: { level: 'disabled' } });
      await signIn(developer, '10.1.0.1');
      assert.deepEqual(await deliver(), [], 'first sign-in ever');
      await signIn(developer, '10.1.0.1');
      assert.deepEqual(await deliver(), [], 'a known address');
      const wrong = await new TestBrowser(t.app, '10.1.0.9').signIn(developer.user.username, 'not-the-password');
      assert.equal(wrong.statusCode, 401);
      assert.deepEqual(await deliver(), [], 'a failed sign-in');

      await signIn(developer, '10.1.0.2');
      // Written to the outbox by the sign-in's own transaction: there before any job runs.
      const queued = (await queuedMails(t.app)).filter((m) => m.subject.endsWith('sign-in from new location') && m.state === 'pending');
      assert.deepEqual(
        queued.map((m) => m.to),
        [developer.user.email],
      );
      const mails = await deliver();
      assert.deepEqual(recipients(mails), emails(developer));
      const mail = mails[0] as ReceivedMail;
      assert.equal(mail.subject, 'basalt.test sign-in from new location');
      assert.ok(mail.text.includes('IP address: 10.1.0.2'), mail.text);
      assert.ok(mail.text.includes(`@${developer.user.username}`), mail.text);
      assert.ok(mail.text.includes('http://basalt.test/-/user_settings/password/edit'), mail.text);
      assert.ok(mail.html.includes('<th align="left">IP address</th><td>10.1.0.2</td>'), mail.html);
      assert.equal(mail.headerLines.get('auto-submitted'), 'auto-generated');
      // An account mail: no project list headers, no unsubscribe.
      assert.equal(mail.headerLines.has('list-id'), false);
      assert.equal(mail.headerLines.has('list-unsubscribe'), false);

      await signIn(developer, '10.1.0.2');
      await signIn(developer, '10.1.0.1');
      assert.deepEqual(await deliver(), [], 'both addresses are known now');
    });

    it('a user keeps at most 20 addresses: the oldest is forgotten, and mails again when it returns', async () => {
      const user = outsider;
      for (let i = 1; i <= 22; i += 1) {
        await signIn(user, `10.2.0.${i}`);
        t.manual?.advance(1_000);
      }
      const mails = await deliver();
      assert.equal(mails.length, 21, 'every address after the first');
      const rows = await t.app.platform.db.selectFrom('user_sign_in_addresses').select('ip').where('user_id', '=', user.user.id).execute();
      assert.equal(rows.length, 20);
      assert.equal(
        rows.some((r) => r.ip === '10.2.0.1' || r.ip === '10.2.0.2'),
        false,
      );
      await signIn(user, '10.2.0.1');
      assert.equal((await deliver()).length, 1);
      await signIn(user, '10.2.0.22');
      assert.deepEqual(await deliver(), []);
    });
  });

  describe('new and regressed errors', () => {
    let key: string;
    let seq = 0;
    const send = async (value: string) => {
      seq += 1;
      const event = exceptionEvent({ eventId: hex32(seq + 5000), type: 'KeyError', value, fn: 'checkout', fingerprint: [value] });
      const res = await post(t, storePath(projectId), JSON.stringify(event), {
        'content-type': 'application/json',
        'x-sentry-auth': sentryAuth(key),
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const errorIdOf = async (title: string) => {
      const list = await t.api('GET', `/projects/${projectId}/error_tracking/errors`, { query: { search: title } });
      const row = list.json<Array<{ id: number; title: string }>>().find((e) => e.title.includes(title));
      assert.ok(row, `error ${title}`);
      return row.id;
    };
    const resolve = async (errorId: number) => {
      const res = await t.api('PUT', `/projects/${projectId}/error_tracking/errors/${errorId}`, { body: { status: 'resolved' } });
      assert.equal(res.statusCode, 200, res.body);
    };
    /** Maintainers and Owners whose level is not disabled (mention-only and custom included); not Developers, blocked or disabled. */
    const errorRecipients = () => emails(owner, maintainer, mentionOnly, customMove, customOther);

    before(async () => {
      key = (await enableTracking(t, projectId, owner.token)).key;
      const settings = await t.api('GET', `/projects/${projectId}/error_tracking/settings`);
      assert.equal(settings.json<{ email_notifications: boolean }>().email_notifications, true, 'on by default');
      await deliver();
    });

    it("a new error mails the project's Maintainers and Owners whose level is not disabled; repeat events mail nobody", async () => {
      await send('cart-total');
      const mails = await deliver();
      assert.deepEqual(recipients(mails), errorRecipients());
      const errorId = await errorIdOf('cart-total');
      const mail = to(mails, maintainer) as ReceivedMail;
      assert.equal(mail.subject, `${projectName} | New error: KeyError: cart-total`);
      assert.ok(mail.text.includes(`A new error was reported in ${projectPath}: KeyError: cart-total`), mail.text);
      assert.ok(mail.text.includes(`http://basalt.test/${projectPath}/-/error_tracking/${errorId}/details`), mail.text);
      assert.ok(mail.text.includes('Events: 1'), mail.text);
      assert.ok(mail.html.includes(`href="http://basalt.test/${projectPath}/-/error_tracking/${errorId}/details"`), mail.html);
      assert.equal(mail.headerLines.get('x-gitlab-notificationreason'), 'participating');
      assert.match(String(mail.headerLines.get('list-id')), new RegExp(`^${projectPath} <`));
      assert.equal(mail.headerLines.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');

      await send('cart-total');
      await send('cart-total');
      assert.deepEqual(await deliver(), [], 'events of a known open error');
    });

    it('an event on a resolved error reopens it and mails the same people once; later events do not', async () => {
      const errorId = await errorIdOf('cart-total');
      await resolve(errorId);
      t.manual?.advance(1_000);
      await send('cart-total');
      const mails = await deliver();
      assert.deepEqual(recipients(mails), errorRecipients());
      const mail = to(mails, owner) as ReceivedMail;
      assert.equal(mail.subject, `${projectName} | Regressed error: KeyError: cart-total`);
      assert.ok(mail.text.includes('happened again and was reopened'), mail.text);
      assert.ok(mail.html.includes('happened again and was reopened'), mail.html);
      const status = await t.api('GET', `/projects/${projectId}/error_tracking/errors/${errorId}`);
      assert.equal(status.json<{ status: string }>().status, 'unresolved');
      t.manual?.advance(1_000);
      await send('cart-total');
      assert.deepEqual(await deliver(), []);
      // Ignored errors stay ignored: no regression.
      const ignored = await t.api('PUT', `/projects/${projectId}/error_tracking/errors/${errorId}`, { body: { status: 'ignored' } });
      assert.equal(ignored.statusCode, 200);
      await send('cart-total');
      assert.deepEqual(await deliver(), []);
    });

    it('with the setting off (API), neither a new nor a regressed error mails anyone; on again, they do', async () => {
      const off = await t.api('PATCH', `/projects/${projectId}/error_tracking/settings`, {
        token: owner.token,
        body: { active: true, email_notifications: false },
      });
      assert.equal(off.statusCode, 200, off.body);
      assert.equal(off.json<{ email_notifications: boolean }>().email_notifications, false);
      await send('quiet-new');
      assert.deepEqual(await deliver(), [], 'new error, setting off');
      await resolve(await errorIdOf('quiet-new'));
      t.manual?.advance(1_000);
      await send('quiet-new');
      assert.deepEqual(await deliver(), [], 'regressed error, setting off');
      // PATCH without the field keeps it.
      const kept = await t.api('PATCH', `/projects/${projectId}/error_tracking/settings`, { body: { active: true } });
      assert.equal(kept.json<{ email_notifications: boolean }>().email_notifications, false);

      const on = await t.api('PATCH', `/projects/${projectId}/error_tracking/settings`, {
        body: { active: true, email_notifications: true },
      });
      assert.equal(on.json<{ email_notifications: boolean }>().email_notifications, true);
      await send('loud-new');
      assert.deepEqual(recipients(await deliver()), errorRecipients());
    });

    it('the Settings > Monitor form has the checkbox; saving it unticked turns the mails off', async () => {
      const browser = new TestBrowser(t.app, '10.1.0.1');
      await browser.signIn(owner.user.username, 'password-123');
      await deliver();
      const page = await browser.request('GET', `/${projectPath}/-/settings/operations`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /type="checkbox" name="email_notifications" value="true" checked/);
      assert.match(page.body, /Email new and regressed errors to Maintainers and Owners/);
      const saved = await browser.request('POST', `/${projectPath}/-/settings/operations/error_tracking`, {
        form: { authenticity_token: TestBrowser.csrfOf(page.body), active: 'true' },
      });
      assert.equal(saved.statusCode, 303, saved.body);
      const settings = await t.api('GET', `/projects/${projectId}/error_tracking/settings`);
      assert.deepEqual(settings.json<{ active: boolean; email_notifications: boolean }>(), {
        active: true,
        project_name: null,
        tracker_external_url: null,
        api_url: null,
        integrated: true,
        email_notifications: false,
      });
      await send('after-form');
      assert.deepEqual(await deliver(), []);
    });
  });
});
