// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

describe('notification settings page and project activity page', () => {
  let t: TestApp;
  let alice: TestUser;
  before(async () => ({ t, alice } = await appWithUsers(['alice'])));
  after(() => t.close());

  it('anonymous visitors are sent to sign in and come back', async () => {
    const browser = new TestBrowser(t.app);
    const res = await browser.request('GET', '/-/profile/notifications');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent('/-/profile/notifications')}`);
  });

  it('shows the global level and email, and the user groups and projects; forms need CSRF', async () => {
    const group = await createGroup(t.app, alice);
    const project = await createProject(t.app, alice, { namespaceId: group.id });
    const owner = await createUser(t.app);
    const other = await createProject(t.app, owner);
    await addMember(t.app, 'project', other.id, alice, 30);
    await t.app.modules.notifications.service.addEmail(alice.user.id, 'alerts@example.com', true);

    const browser = new TestBrowser(t.app);
    await browser.signIn(alice.user.username, 'password-123');
    const page = await browser.request('GET', '/-/profile/notifications');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<option value="participating" selected>/);
    assert.match(page.body, new RegExp(`${alice.user.email} \\(primary\\)`));
    assert.match(page.body, /alerts@example.com/);
    assert.match(page.body, new RegExp(`id="groups-${group.id}"`));
    assert.match(page.body, new RegExp(`id="projects-${project.id}"`));
    assert.match(page.body, new RegExp(`id="projects-${other.id}"`));

    const forged = await browser.request('POST', '/-/profile/notifications', { form: { level: 'watch', authenticity_token: 'forged' } });
    assert.equal(forged.statusCode, 422);
    const token = TestBrowser.csrfOf(page.body);
    const saved = await browser.request('POST', '/-/profile/notifications', {
      form: { level: 'watch', notification_email: 'alerts@example.com', authenticity_token: token },
    });
    assert.equal(saved.statusCode, 303);
    const api = await t.api('GET', '/notification_settings', { token: alice.token });
    assert.deepEqual(api.json(), { level: 'watch', notification_email: 'alerts@example.com' });

    const bad = await browser.request('POST', '/-/profile/notifications', {
      form: { notification_email: 'x@nowhere.test', authenticity_token: token },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /must be an email you have verified/);

    const projectSaved = await browser.request('POST', `/-/profile/notifications/projects/${project.id}`, {
      form: { level: 'disabled', authenticity_token: token },
    });
    assert.equal(projectSaved.statusCode, 303);
    assert.deepEqual((await t.api('GET', `/projects/${project.id}/notification_settings`, { token: alice.token })).json(), {
      level: 'disabled',
    });
    const groupSaved = await browser.request('POST', `/-/profile/notifications/groups/${group.id}`, {
      form: { level: 'mention', authenticity_token: token },
    });
    assert.equal(groupSaved.statusCode, 303);
    const again = await browser.request('GET', String(groupSaved.headers.location));
    assert.match(again.body, /Notification settings saved/);
    assert.match(again.body, new RegExp(`id="groups-${group.id}"[\\s\\S]*?<option value="mention" selected>`));

    const hidden = await createProject(t.app, owner, { visibility: 'private' });
    const refused = await browser.request('POST', `/-/profile/notifications/projects/${hidden.id}`, {
      form: { level: 'watch', authenticity_token: token },
    });
    assert.equal(refused.statusCode, 404);
  });

  it('Custom shows its events (new_epic for groups and global, approver for projects and global), saved with the level; without SMTP the page says no mail is sent', async () => {
    const group = await createGroup(t.app, alice);
    const project = await createProject(t.app, alice, { namespaceId: group.id });
    const browser = new TestBrowser(t.app);
    await browser.signIn(alice.user.username, 'password-123');
    const page = await browser.request('GET', '/-/profile/notifications');
    assert.match(page.body, /id="mail-disabled"[^>]*>[^<]*SMTP_URL is unset/);
    const rowOf = (html: string, id: string) => html.slice(html.indexOf(`id="${id}"`), html.indexOf('</tr>', html.indexOf(`id="${id}"`)));
    const projectRow = rowOf(page.body, `projects-${project.id}`);
    const groupRow = rowOf(page.body, `groups-${group.id}`);
    assert.match(projectRow, /name="approver"/);
    assert.doesNotMatch(projectRow, /name="new_epic"/);
    assert.match(groupRow, /name="new_epic"/);
    assert.doesNotMatch(groupRow, /name="approver"/);
    assert.match(page.body, /id="events-global-new_epic"/);
    assert.match(page.body, /id="events-global-approver"/);
    assert.match(projectRow, /<label for="events-projects-\d+-new_note">New note<\/label>/);
    assert.doesNotMatch(projectRow, /<details class="custom-events" open/);

    const token = TestBrowser.csrfOf(page.body);
    const saved = await browser.request('POST', `/-/profile/notifications/projects/${project.id}`, {
      form: { level: 'custom', custom_events: '1', new_note: 'true', close_issue: 'true', authenticity_token: token },
    });
    assert.equal(saved.statusCode, 303);
    const api = (await t.api('GET', `/projects/${project.id}/notification_settings`, { token: alice.token })).json();
    assert.equal(api.level, 'custom');
    assert.equal(api.events.new_note, true);
    assert.equal(api.events.close_issue, true);
    assert.equal(api.events.new_issue, false, 'an unticked box is saved as off');
    const again = rowOf((await browser.request('GET', '/-/profile/notifications')).body, `projects-${project.id}`);
    assert.match(again, /<details class="custom-events" open/);
    assert.match(again, /id="events-projects-\d+-new_note" type="checkbox" name="new_note" value="true" checked/);
    assert.doesNotMatch(again, /name="new_issue" value="true" checked/);
  });

  it('an administrator sees the groups and projects they belong to, not every project', async () => {
    const admin = await createUser(t.app, { admin: true });
    const group = await createGroup(t.app, admin);
    const mine = await createProject(t.app, admin, { namespaceId: group.id });
    const owner = await createUser(t.app);
    const joined = await createProject(t.app, owner);
    await addMember(t.app, 'project', joined.id, admin, 40);
    const foreign = await createProject(t.app, owner);
    const browser = new TestBrowser(t.app);
    await browser.signIn(admin.user.username, 'password-123');
    const page = await browser.request('GET', '/-/profile/notifications');
    assert.match(page.body, new RegExp(`id="groups-${group.id}"`));
    assert.match(page.body, new RegExp(`id="projects-${mine.id}"`));
    assert.match(page.body, new RegExp(`id="projects-${joined.id}"`));
    assert.doesNotMatch(page.body, new RegExp(`id="projects-${foreign.id}"`));
  });

  it('the activity page lists a project events; private projects need access', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'Printer on fire' } });
    const anonymous = new TestBrowser(t.app);
    const former = await anonymous.request('GET', `/-/projects/${encodeURIComponent(project.full_path)}/activity`);
    assert.equal(former.statusCode, 301);
    assert.equal(former.headers.location, `/${project.full_path}/-/activity`);
    const page = await anonymous.request('GET', `/${project.full_path}/-/activity`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /opened <a href="[^"]+\/-\/issues\/1">issue #1 Printer on fire<\/a>/);
    assert.match(page.body, /created the project/);
    const issuesOnly = await anonymous.request('GET', `/${project.full_path}/-/activity?filter=push`);
    assert.match(issuesOnly.body, /No activity yet/);

    const secret = await createProject(t.app, alice, { visibility: 'private' });
    const redirected = await anonymous.request('GET', `/${secret.full_path}/-/activity`);
    assert.equal(redirected.statusCode, 302);
    assert.match(String(redirected.headers.location), /^\/users\/sign_in\?redirect_to=/);
    const bob = await createUser(t.app);
    const bobBrowser = new TestBrowser(t.app);
    await bobBrowser.signIn(bob.user.username, 'password-123');
    assert.equal((await bobBrowser.request('GET', `/${secret.full_path}/-/activity`)).statusCode, 404);
    const aliceBrowser = new TestBrowser(t.app);
    await aliceBrowser.signIn(alice.user.username, 'password-123');
    assert.equal((await aliceBrowser.request('GET', `/${secret.full_path}/-/activity`)).statusCode, 200);
  });
});
