// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { projectWithAlertAndError } from '../helpers/pages.js';
import { appWithUsers } from '../helpers/suite.js';

/** The path of an absolute `web_url`, as a browser would open it. */
const pathOf = (webUrl: string) => new URL(webUrl).pathname;

async function browserFor(t: TestApp, user: TestUser): Promise<TestBrowser> {
  const browser = new TestBrowser(t.app);
  const res = await browser.signIn(user.user.username, 'password-123');
  assert.equal(res.statusCode, 303);
  return browser;
}

describe('project, user and group pages', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));
  after(() => t.close());

  it('a project page shows its overview to whoever may see the project, at its web_url', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await t.api('PUT', `/projects/${project.id}`, { token: alice.token, body: { description: 'Counts <b>sheep</b>' } });
    await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'One' } });
    const entity = (await t.api('GET', `/projects/${project.id}`, { token: null })).json();
    const anonymous = new TestBrowser(t.app);
    const page = await anonymous.request('GET', pathOf(entity.web_url));
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /text\/html/);
    assert.match(page.body, new RegExp(`<h1>${project.name} `));
    assert.match(page.body, /Counts &lt;b>sheep&lt;\/b>/);
    assert.match(page.body, new RegExp(`value="http://basalt.test/${project.full_path}.git"`));
    assert.match(page.body, /id="open-issues"><strong>1<\/strong> open issue</);
    assert.match(page.body, new RegExp(`href="/${project.full_path}/-/activity"`));
    // A visitor is not a maintainer: no settings link, no setup hint.
    assert.doesNotMatch(page.body, /settings\/operations/);

    const secret = await createProject(t.app, alice, { visibility: 'private' });
    const toSignIn = await anonymous.request('GET', `/${secret.full_path}`);
    assert.equal(toSignIn.statusCode, 302);
    assert.equal(toSignIn.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(`/${secret.full_path}`)}`);
    const bobBrowser = await browserFor(t, bob);
    const hidden = await bobBrowser.request('GET', `/${secret.full_path}`);
    assert.equal(hidden.statusCode, 404);
    assert.match(hidden.body, /Page not found/);
    const aliceBrowser = await browserFor(t, alice);
    const own = await aliceBrowser.request('GET', `/${secret.full_path}`);
    assert.equal(own.statusCode, 200);
    assert.match(own.body, new RegExp(`href="/${secret.full_path}/-/settings/operations"`));
  });

  it('the breadcrumb links a group only for those who may see it', async () => {
    const group = await createGroup(t.app, alice, { visibility: 'private' });
    const project = await createProject(t.app, alice, { namespaceId: group.id, visibility: 'private' });
    await addMember(t.app, 'project', project.id, bob, 20);
    const member = await (await browserFor(t, bob)).request('GET', `/${project.full_path}/-/issues`);
    assert.equal(member.statusCode, 200);
    assert.match(member.body, new RegExp(`<li><span>${group.name}</span></li>`));
    assert.doesNotMatch(member.body, new RegExp(`href="/groups/${group.full_path}"`));
    const owner = await (await browserFor(t, alice)).request('GET', `/${project.full_path}/-/activity`);
    assert.match(owner.body, new RegExp(`href="/groups/${group.full_path}"`));
  });

  it('a renamed project answers 301 from its old address to its new one, pages below it too', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await t.api('PUT', `/projects/${project.id}`, { token: alice.token, body: { path: `${project.path}-renamed` } });
    const browser = new TestBrowser(t.app);
    const moved = await browser.request('GET', `/${project.full_path}`);
    assert.equal(moved.statusCode, 301);
    assert.equal(pathOf(String(moved.headers.location)), `/${project.full_path}-renamed`);
    const issues = await browser.request('GET', `/${project.full_path}/-/issues?state=all`);
    assert.equal(issues.statusCode, 301);
    const location = new URL(String(issues.headers.location));
    assert.equal(`${location.pathname}${location.search}`, `/${project.full_path}-renamed/-/issues?state=all`);
  });

  it('a user page is the public profile; a private profile shows the name and username only', async () => {
    const carol = await createUser(t.app);
    await t.app.modules.identity.users.update(carol.user.id, { bio: 'Keeps bees' });
    const hers = await createProject(t.app, carol, { visibility: 'public' });
    const mine = await createProject(t.app, carol, { visibility: 'private' });
    const anonymous = new TestBrowser(t.app);
    const userUrl = (await t.api('GET', `/users/${carol.user.id}`, { token: bob.token })).json().web_url;
    const page = await anonymous.request('GET', pathOf(userUrl));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Keeps bees/);
    assert.match(page.body, new RegExp(`href="/${hers.full_path}"`));
    assert.doesNotMatch(page.body, new RegExp(`href="/${mine.full_path}"`));

    const dave = await createUser(t.app, { privateProfile: true });
    await t.app.modules.identity.users.update(dave.user.id, { bio: 'Secret hobby' });
    await createProject(t.app, dave, { visibility: 'public' });
    const closed = await anonymous.request('GET', `/${dave.user.username}`);
    assert.equal(closed.statusCode, 200);
    assert.match(closed.body, new RegExp(dave.user.name));
    assert.match(closed.body, /private profile/);
    assert.doesNotMatch(closed.body, /Secret hobby/);
    const self = await (await browserFor(t, dave)).request('GET', `/${dave.user.username}`);
    assert.match(self.body, /Secret hobby/);

    assert.equal((await (await browserFor(t, bob)).request('GET', '/no-such-user-here')).statusCode, 404);
  });

  it('a group page lists subgroups, the projects the viewer may see and the members count; /<group> moves to /groups/<group>', async () => {
    const group = await createGroup(t.app, alice, { visibility: 'public' });
    const sub = await createGroup(t.app, alice, { parentId: group.id, visibility: 'public' });
    const open = await createProject(t.app, alice, { namespaceId: group.id, visibility: 'public' });
    const closed = await createProject(t.app, alice, { namespaceId: group.id, visibility: 'private' });
    await addMember(t.app, 'namespace', group.id, bob, 20);
    const anonymous = new TestBrowser(t.app);
    const webUrl = (await t.api('GET', `/groups/${group.id}`, { token: null })).json().web_url;
    const page = await anonymous.request('GET', pathOf(webUrl));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, new RegExp(`href="/groups/${sub.full_path}"`));
    assert.match(page.body, new RegExp(`href="/${open.full_path}"`));
    assert.doesNotMatch(page.body, new RegExp(`href="/${closed.full_path}"`));
    assert.match(page.body, /id="members-count">2</);
    assert.doesNotMatch(page.body, /New project/);
    const member = await (await browserFor(t, bob)).request('GET', `/groups/${group.full_path}`);
    assert.match(member.body, new RegExp(`href="/${closed.full_path}"`));

    const bare = await anonymous.request('GET', `/${group.full_path}`);
    assert.equal(bare.statusCode, 301);
    assert.equal(bare.headers.location, `/groups/${group.full_path}`);
    const subgroupUrl = (await t.api('GET', `/groups/${sub.id}`, { token: null })).json().web_url;
    assert.equal((await anonymous.request('GET', pathOf(subgroupUrl))).statusCode, 200);

    const hidden = await createGroup(t.app, alice, { visibility: 'private' });
    assert.equal((await anonymous.request('GET', `/groups/${hidden.full_path}`)).statusCode, 302);
    assert.equal((await (await browserFor(t, bob)).request('GET', `/groups/${hidden.full_path}`)).statusCode, 404);
    const owner = await (await browserFor(t, alice)).request('GET', `/groups/${hidden.full_path}`);
    assert.match(owner.body, /Create a project/);
  });
});

describe('issue pages', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let reporter: TestUser;
  before(async () => ({ t, alice, bob, reporter } = await appWithUsers(['alice', 'bob', 'reporter'])));
  after(() => t.close());

  it('lists issues with Open/Closed/All tabs and counts, search and pages', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    for (let i = 1; i <= 23; i += 1)
      await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: `Leak ${i}` } });
    await t.api('PUT', `/projects/${project.id}/issues/1`, { token: alice.token, body: { state_event: 'close' } });
    const anonymous = new TestBrowser(t.app);
    const list = await anonymous.request('GET', `/${project.full_path}/-/issues`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /Open <span class="badge">22<\/span>/);
    assert.match(list.body, /Closed <span class="badge">1<\/span>/);
    assert.match(list.body, /All <span class="badge">23<\/span>/);
    assert.equal((list.body.match(/id="issue-\d+"/g) ?? []).length, 20);
    assert.match(list.body, /rel="next"/);
    assert.doesNotMatch(list.body, /New issue/);
    const second = await anonymous.request('GET', `/${project.full_path}/-/issues?page=2`);
    assert.equal((second.body.match(/id="issue-\d+"/g) ?? []).length, 2);
    const found = await anonymous.request('GET', `/${project.full_path}/-/issues?state=all&search=Leak%2017`);
    assert.match(found.body, /id="issue-17"/);
    assert.equal((found.body.match(/id="issue-\d+"/g) ?? []).length, 1);
    const closed = await anonymous.request('GET', `/${project.full_path}/-/issues?state=closed`);
    assert.match(closed.body, /id="issue-1"/);
    const bad = await anonymous.request('GET', `/${project.full_path}/-/issues?state=sideways`);
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /<html/);
  });

  it('a new issue form keeps what was typed and shows each field message; created, it lands on the issue', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    const browser = await browserFor(t, bob);
    const list = await browser.request('GET', `/${project.full_path}/-/issues`);
    assert.match(list.body, new RegExp(`href="/${project.full_path}/-/issues/new"`));
    const form = await browser.request('GET', `/${project.full_path}/-/issues/new`);
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<label for="field-title">Title<\/label>/);
    const token = TestBrowser.csrfOf(form.body);
    const empty = await browser.request('POST', `/${project.full_path}/-/issues`, {
      form: { authenticity_token: token, title: '', description: 'kept text' },
    });
    assert.equal(empty.statusCode, 400);
    assert.match(empty.body, /id="field-title-error">cannot be empty/);
    assert.match(empty.body, /kept text/);
    const blank = await browser.request('POST', `/${project.full_path}/-/issues`, {
      form: { authenticity_token: token, title: '   ', description: '' },
    });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /can&#39;t be blank|can't be blank/);
    const forged = await browser.request('POST', `/${project.full_path}/-/issues`, {
      form: { authenticity_token: 'forged', title: 'x' },
    });
    assert.equal(forged.statusCode, 422);
    const created = await browser.request('POST', `/${project.full_path}/-/issues`, {
      form: { authenticity_token: token, title: 'Broken lamp', description: 'It **flickers**' },
    });
    assert.equal(created.statusCode, 303);
    assert.equal(created.headers.location, `/${project.full_path}/-/issues/1`);
    const page = await browser.request('GET', String(created.headers.location));
    assert.match(page.body, /Issue #1 was created/);
    assert.match(page.body, /<strong>flickers<\/strong>/);
    const anonymousNew = await new TestBrowser(t.app).request('GET', `/${project.full_path}/-/issues/new`);
    assert.equal(anonymousNew.statusCode, 302);
  });

  it('a long discussion is paged, oldest first; a new comment lands on the last page', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    const issue = (await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'Long thread' } })).json();
    const { issues } = t.app.modules.projects;
    const row = await issues.get(project, issue.iid, alice.actor, 50);
    for (let i = 1; i <= 205; i += 1) await issues.addNote(project, row, alice.user.id, `Comment number ${i}.`);
    const browser = await browserFor(t, bob);
    const first = await browser.request('GET', pathOf(issue.web_url));
    assert.equal((first.body.match(/<li id="note-\d+" class="note"/g) ?? []).length, 100);
    assert.match(first.body, /Comment number 1\.</);
    assert.doesNotMatch(first.body, /Comment number 101\./);
    assert.match(first.body, /Comments page 1 of 3/);
    assert.match(first.body, /href="[^"]*\?notes_page=2#notes-heading" rel="next">Newer comments/);
    const last = await browser.request('GET', `${pathOf(issue.web_url)}?notes_page=3`);
    assert.equal((last.body.match(/<li id="note-\d+" class="note"/g) ?? []).length, 5);
    assert.match(last.body, /Comment number 205\./);
    assert.match(last.body, /rel="prev">Older comments/);
    const noted = await browser.request('POST', `${pathOf(issue.web_url)}/notes`, {
      form: { authenticity_token: TestBrowser.csrfOf(first.body), body: 'The newest word' },
    });
    assert.equal(noted.statusCode, 303);
    assert.match(String(noted.headers.location), /\?notes_page=3#note-\d+$/);
    assert.match((await browser.request('GET', String(noted.headers.location).split('#')[0]!)).body, /The newest word/);
    assert.equal((await browser.request('GET', `${pathOf(issue.web_url)}?notes_page=0`)).statusCode, 400);
  });

  it('an issue page renders Markdown safely, takes comments, and closes and reopens for those who may', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await addMember(t.app, 'project', project.id, reporter, 20);
    const issue = (
      await t.api('POST', `/projects/${project.id}/issues`, {
        token: alice.token,
        body: { title: 'Script', description: '<script>alert(1)</script> [x](javascript:alert(1)) [ok](https://example.com)' },
      })
    ).json();
    const anonymous = new TestBrowser(t.app);
    const page = await anonymous.request('GET', pathOf(issue.web_url));
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /<script>/);
    assert.match(page.body, /&lt;script&gt;/);
    assert.doesNotMatch(page.body, /href="javascript:/);
    assert.match(page.body, /href="https:\/\/example.com" rel="nofollow noreferrer noopener"/);
    assert.doesNotMatch(page.body, /Close issue/);
    assert.match(page.body, /Sign in<\/a> to comment/);

    const bobBrowser = await browserFor(t, bob);
    const bobPage = await bobBrowser.request('GET', pathOf(issue.web_url));
    assert.match(bobPage.body, /<label for="field-body">Comment<\/label>/);
    assert.doesNotMatch(bobPage.body, /Close issue/);
    const token = TestBrowser.csrfOf(bobPage.body);
    const empty = await bobBrowser.request('POST', `${pathOf(issue.web_url)}/notes`, { form: { authenticity_token: token, body: '' } });
    assert.equal(empty.statusCode, 400);
    assert.match(empty.body, /id="field-body-error"/);
    const noted = await bobBrowser.request('POST', `${pathOf(issue.web_url)}/notes`, {
      form: { authenticity_token: token, body: 'Same here, _twice_' },
    });
    assert.equal(noted.statusCode, 303);
    const withNote = await bobBrowser.request('GET', String(noted.headers.location).split('#')[0]!);
    assert.match(withNote.body, /Your comment was added/);
    assert.match(withNote.body, /Same here, <em>twice<\/em>/);
    const notes = (await t.api('GET', `/projects/${project.id}/issues/${issue.iid}/notes`)).json();
    assert.equal(notes[0].body, 'Same here, _twice_');

    const refused = await bobBrowser.request('POST', `${pathOf(issue.web_url)}/close`, { form: { authenticity_token: token } });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /Reporter/);

    const reporterBrowser = await browserFor(t, reporter);
    const reporterPage = await reporterBrowser.request('GET', pathOf(issue.web_url));
    assert.match(reporterPage.body, /Close issue/);
    const closed = await reporterBrowser.request('POST', `${pathOf(issue.web_url)}/close`, {
      form: { authenticity_token: TestBrowser.csrfOf(reporterPage.body) },
    });
    assert.equal(closed.statusCode, 303);
    assert.equal((await t.api('GET', `/projects/${project.id}/issues/${issue.iid}`)).json().state, 'closed');
    const after = await reporterBrowser.request('GET', pathOf(issue.web_url));
    assert.match(after.body, /Issue #1 was closed/);
    assert.match(after.body, /Reopen issue/);
    const reopened = await reporterBrowser.request('POST', `${pathOf(issue.web_url)}/reopen`, {
      form: { authenticity_token: TestBrowser.csrfOf(after.body) },
    });
    assert.equal(reopened.statusCode, 303);
    assert.equal((await t.api('GET', `/projects/${project.id}/issues/${issue.iid}`)).json().state, 'opened');

    // Its author closes it too, as the API lets them.
    const own = (await t.api('POST', `/projects/${project.id}/issues`, { token: bob.token, body: { title: 'Mine' } })).json();
    const ownPage = await bobBrowser.request('GET', pathOf(own.web_url));
    assert.match(ownPage.body, /Close issue/);
  });

  it('confidential issues are shown only to Reporters and their author', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await addMember(t.app, 'project', project.id, reporter, 20);
    const secret = (
      await t.api('POST', `/projects/${project.id}/issues`, { token: bob.token, body: { title: 'Hush', confidential: true } })
    ).json();
    const carol = await createUser(t.app);
    const carolBrowser = await browserFor(t, carol);
    assert.equal((await carolBrowser.request('GET', pathOf(secret.web_url))).statusCode, 404);
    const list = await carolBrowser.request('GET', `/${project.full_path}/-/issues`);
    assert.doesNotMatch(list.body, /Hush/);
    assert.equal((await new TestBrowser(t.app).request('GET', pathOf(secret.web_url))).statusCode, 302);
    assert.equal((await (await browserFor(t, bob)).request('GET', pathOf(secret.web_url))).statusCode, 200);
    const reporterPage = await (await browserFor(t, reporter)).request('GET', pathOf(secret.web_url));
    assert.equal(reporterPage.statusCode, 200);
    assert.match(reporterPage.body, /Confidential/);
    assert.equal((await carolBrowser.request('GET', `/${project.full_path}/-/issues/999`)).statusCode, 404);
  });
});

describe('where an issue came from', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));
  after(() => t.close());

  it('an incident links its alert and an issue opened from an error links the error, for the roles that open them', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await t.api('PUT', `/projects/${project.id}/alert_management/settings`, { body: { create_issue: true } });
    const fixtures = await projectWithAlertAndError(t, project.id, 'boom', 7);
    const incident = (await t.api('GET', `/projects/${project.id}/issues?issue_type=incident`)).json()[0];
    const fromError = (await t.api('POST', `/projects/${project.id}/error_tracking/errors/${fixtures.errorId}/issue`)).json();
    const owner = await browserFor(t, alice);
    const incidentPage = await owner.request('GET', pathOf(incident.web_url));
    assert.match(incidentPage.body, new RegExp(`Created from <a href="[^"]+">alert \\^${fixtures.alertIid}: boom alert</a>`));
    const errorIssue = await owner.request('GET', pathOf(fromError.web_url));
    const errorLink = /Created from <a href="([^"]+)">error boom<\/a>/.exec(errorIssue.body)?.[1];
    assert.ok(errorLink, 'the issue links the error it came from');
    // A visitor learns where it came from, without a link to a page its role does not open.
    const visitor = await (await browserFor(t, bob)).request('GET', pathOf(fromError.web_url));
    assert.match(visitor.body, /Created from error boom/);
    // The error page links the issue page, not the API.
    const errorPage = await owner.request('GET', errorLink);
    assert.equal(errorPage.statusCode, 200);
    assert.match(errorPage.body, new RegExp(`href="/${project.full_path}/-/issues/${fromError.iid}"`));
    // Error tracking is on: no setup hint; a project without it offers one to its Maintainers.
    assert.doesNotMatch((await owner.request('GET', `/${project.full_path}`)).body, /Set up error tracking/);
    const bare = await createProject(t.app, alice, { visibility: 'public' });
    const hint = await owner.request('GET', `/${bare.full_path}`);
    assert.match(hint.body, new RegExp(`<a class="button" href="/${bare.full_path}/-/settings/operations">Set up error tracking</a>`));
  });
});

describe('snippet pages', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));
  after(() => t.close());

  it('a snippet web_url shows the snippet to whoever may see it, with the API rules', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    const snippet = (
      await t.api('POST', `/projects/${project.id}/snippets`, {
        token: alice.token,
        body: { title: 'Setup', file_name: 'setup.sh', content: 'echo "<hi>"', visibility: 'public' },
      })
    ).json();
    const anonymous = new TestBrowser(t.app);
    const page = await anonymous.request('GET', pathOf(snippet.web_url));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /setup.sh/);
    assert.match(page.body, /<pre id="snippet-content">echo &quot;&lt;hi>&quot;<\/pre>|<pre id="snippet-content">echo "&lt;hi&gt;"<\/pre>/);
    const raw = await anonymous.request('GET', pathOf(snippet.raw_url));
    assert.equal(raw.statusCode, 200);
    assert.equal(raw.body, 'echo "<hi>"');
    assert.match(String(raw.headers['content-type']), /text\/plain/);

    const internal = (
      await t.api('POST', `/projects/${project.id}/snippets`, {
        token: alice.token,
        body: { title: 'Inside', file_name: 'a.txt', content: 'x', visibility: 'internal' },
      })
    ).json();
    assert.equal((await anonymous.request('GET', pathOf(internal.web_url))).statusCode, 302);
    assert.equal((await (await browserFor(t, bob)).request('GET', pathOf(internal.web_url))).statusCode, 200);

    const personal = (
      await t.api('POST', '/snippets', {
        token: alice.token,
        body: { title: 'Mine', file_name: 'm.txt', content: 'm', visibility: 'private' },
      })
    ).json();
    assert.equal(pathOf(personal.web_url), `/-/snippets/${personal.id}`);
    assert.equal((await (await browserFor(t, bob)).request('GET', pathOf(personal.web_url))).statusCode, 404);
    const own = await (await browserFor(t, alice)).request('GET', pathOf(personal.web_url));
    assert.equal(own.statusCode, 200);
    assert.match(own.body, /Mine/);
    // By id alone, a project snippet answers at its project's address.
    const byId = await anonymous.request('GET', `/-/snippets/${snippet.id}`);
    assert.equal(byId.statusCode, 301);
    assert.equal(byId.headers.location, pathOf(snippet.web_url));
    // Under another project, it is not there.
    const other = await createProject(t.app, alice, { visibility: 'public' });
    assert.equal((await (await browserFor(t, bob)).request('GET', `/${other.full_path}/-/snippets/${snippet.id}`)).statusCode, 404);
  });
});
