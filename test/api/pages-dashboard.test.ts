// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

async function browserFor(t: TestApp, user: TestUser): Promise<TestBrowser> {
  const browser = new TestBrowser(t.app);
  const res = await browser.signIn(user.user.username, 'password-123');
  assert.equal(res.statusCode, 303);
  return browser;
}

describe('dashboard pages', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));
  after(() => t.close());

  it('anonymous visitors of / go to the sign-in page, and land on the dashboard after signing in', async () => {
    const browser = new TestBrowser(t.app);
    const home = await browser.request('GET', '/');
    assert.equal(home.statusCode, 302);
    assert.equal(home.headers.location, '/users/sign_in');
    const signedIn = await browser.signIn(alice.user.username, 'password-123');
    assert.equal(signedIn.headers.location, '/');
    for (const path of ['/dashboard/projects', '/dashboard/groups', '/dashboard/activity', '/projects/new']) {
      const res = await new TestBrowser(t.app).request('GET', path);
      assert.equal(res.statusCode, 302, path);
      assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(path)}`);
    }
  });

  it('a new user sees empty states that say what to do next', async () => {
    const carol = await createUser(t.app);
    const browser = await browserFor(t, carol);
    const home = await browser.request('GET', '/');
    assert.equal(home.statusCode, 200);
    assert.match(home.body, /You have no projects yet/);
    assert.match(home.body, /<a class="button" href="\/projects\/new">Create a project<\/a>/);
    assert.match(home.body, /You are not in any group yet/);
    assert.match(home.body, /No activity yet/);
    for (const [path, text] of [
      ['/dashboard/projects', /Create a project/],
      ['/dashboard/groups', /not in any group/],
      ['/dashboard/activity', /No activity yet/],
    ] as const) {
      const res = await browser.request('GET', path);
      assert.equal(res.statusCode, 200, path);
      assert.match(res.body, text);
    }
    // The header's navigation is on every page.
    assert.match(home.body, /<a href="\/dashboard\/projects">Projects<\/a>/);
  });

  it('kept dashboards and overviews follow every write: a new project, an issue, a removed membership', async () => {
    const carol = await createUser(t.app);
    const browser = await browserFor(t, carol);
    assert.match((await browser.request('GET', '/')).body, /You have no projects yet/);
    const project = await createProject(t.app, alice, { visibility: 'private' });
    await addMember(t.app, 'project', project.id, carol, 30);
    const home = await browser.request('GET', '/');
    assert.match(home.body, new RegExp(`href="/${project.full_path}"`));
    const overview = () => browser.request('GET', `/${project.full_path}`);
    const before = await overview();
    assert.equal(before.statusCode, 200);
    assert.match(before.body, /<strong>0<\/strong> open issues/);
    await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'Kept no longer' } });
    assert.match((await overview()).body, /<strong>1<\/strong> open issue\b/);
    const removed = await t.api('DELETE', `/projects/${project.id}/members/${carol.user.id}`, { token: alice.token });
    assert.equal(removed.statusCode, 204);
    assert.equal((await overview()).statusCode, 404);
    assert.doesNotMatch((await browser.request('GET', '/')).body, new RegExp(`href="/${project.full_path}"`));
  });

  it('shows the projects and groups the user is a member of and recent activity in them, not others', async () => {
    const group = await createGroup(t.app, alice, { visibility: 'private' });
    const inGroup = await createProject(t.app, alice, { namespaceId: group.id, visibility: 'private' });
    const own = await createProject(t.app, bob, { visibility: 'private' });
    const strangers = await createProject(t.app, alice, { visibility: 'public' });
    await addMember(t.app, 'namespace', group.id, bob, 30);
    await t.api('POST', `/projects/${inGroup.id}/issues`, { token: alice.token, body: { title: 'Group work' } });
    await t.api('POST', `/projects/${strangers.id}/issues`, { token: alice.token, body: { title: 'Elsewhere' } });
    const browser = await browserFor(t, bob);
    const home = await browser.request('GET', '/');
    assert.match(home.body, new RegExp(`href="/${inGroup.full_path}"`));
    assert.match(home.body, new RegExp(`href="/${own.full_path}"`));
    assert.doesNotMatch(home.body, new RegExp(`href="/${strangers.full_path}"`));
    assert.match(home.body, new RegExp(`href="/groups/${group.full_path}"`));
    assert.match(home.body, new RegExp(`opened <a href="/${inGroup.full_path}/-/issues/1">issue #1 Group work</a>`));
    assert.doesNotMatch(home.body, /Elsewhere/);

    const searched = await browser.request('GET', `/dashboard/projects?search=${encodeURIComponent(own.path)}`);
    assert.match(searched.body, new RegExp(`href="/${own.full_path}"`));
    assert.doesNotMatch(searched.body, new RegExp(`href="/${inGroup.full_path}"`));
    const groups = await browser.request('GET', '/dashboard/groups');
    assert.match(groups.body, new RegExp(`href="/groups/${group.full_path}"`));
    const activity = await browser.request('GET', '/dashboard/activity');
    assert.match(activity.body, /Group work/);
  });

  it('creates a project through the form, in a personal namespace or a group where the user may', async () => {
    const dave = await createUser(t.app);
    const group = await createGroup(t.app, alice, { visibility: 'public' });
    const readOnly = await createGroup(t.app, alice, { visibility: 'public' });
    await addMember(t.app, 'namespace', group.id, dave, 30);
    await addMember(t.app, 'namespace', readOnly.id, dave, 20);
    const browser = await browserFor(t, dave);
    const form = await browser.request('GET', '/projects/new');
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<label for="field-name">Project name<\/label>/);
    assert.match(form.body, new RegExp(`<option value="\\d+" selected>${dave.user.username} \\(personal\\)</option>`));
    assert.match(form.body, new RegExp(`<option value="${group.id}">${group.full_path}</option>`));
    assert.doesNotMatch(form.body, new RegExp(`<option value="${readOnly.id}">`));
    const token = TestBrowser.csrfOf(form.body);

    const empty = await browser.request('POST', '/projects', {
      form: { authenticity_token: token, name: '', namespace_id: String(group.id), visibility: 'public', path: 'kept-path' },
    });
    assert.equal(empty.statusCode, 400);
    assert.match(empty.body, /id="field-name-error">cannot be empty/);
    assert.match(empty.body, /value="kept-path"/);
    assert.match(empty.body, new RegExp(`<option value="${group.id}" selected>`));

    const refused = await browser.request('POST', '/projects', {
      form: { authenticity_token: token, name: 'Nope', namespace_id: String(readOnly.id), visibility: 'private' },
    });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /id="field-namespace_id-error">You cannot create projects in this namespace/);

    const created = await browser.request('POST', '/projects', {
      form: { authenticity_token: token, name: 'Weather Station', namespace_id: String(group.id), visibility: 'public' },
    });
    assert.equal(created.statusCode, 303);
    assert.equal(created.headers.location, `/${group.full_path}/weather-station`);
    const page = await browser.request('GET', String(created.headers.location));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Project Weather Station was created/);

    const taken = await browser.request('POST', '/projects', {
      form: { authenticity_token: token, name: 'Weather Station', namespace_id: String(group.id), visibility: 'public' },
    });
    assert.equal(taken.statusCode, 400);
    assert.match(taken.body, /id="field-path-error">has already been taken/);

    const badPath = await browser.request('POST', '/projects', {
      form: { authenticity_token: token, name: 'X', path: '-bad-', namespace_id: String(group.id), visibility: 'public' },
    });
    assert.equal(badPath.statusCode, 400);
    assert.match(badPath.body, /id="field-path-error"/);

    const forged = await browser.request('POST', '/projects', {
      form: { authenticity_token: 'forged', name: 'Y', namespace_id: String(group.id), visibility: 'public' },
    });
    assert.equal(forged.statusCode, 422);
    assert.match(forged.body, /This form has expired/);
  });
});

describe('project activity page', () => {
  let t: TestApp;
  let alice: TestUser;
  before(async () => ({ t, alice } = await appWithUsers(['alice'])));
  after(() => t.close());

  it('lives at /<full_path>/-/activity with the project navigation; the former address answers 301', async () => {
    const project = await createProject(t.app, alice, { visibility: 'public' });
    await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'Printer on fire' } });
    const anonymous = new TestBrowser(t.app);
    const page = await anonymous.request('GET', `/${project.full_path}/-/activity`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, new RegExp(`opened <a href="/${project.full_path}/-/issues/1">issue #1 Printer on fire</a>`));
    assert.match(page.body, /aria-current="page">Activity</);
    const pushes = await anonymous.request('GET', `/${project.full_path}/-/activity?filter=push`);
    assert.match(pushes.body, /No activity yet/);

    const byId = await anonymous.request('GET', `/-/projects/${project.id}/activity?filter=issue`);
    assert.equal(byId.statusCode, 301);
    assert.equal(byId.headers.location, `/${project.full_path}/-/activity?filter=issue`);
    const byPath = await anonymous.request('GET', `/-/projects/${encodeURIComponent(project.full_path)}/activity`);
    assert.equal(byPath.statusCode, 301);
    assert.equal(byPath.headers.location, `/${project.full_path}/-/activity`);

    const secret = await createProject(t.app, alice, { visibility: 'private' });
    assert.equal((await anonymous.request('GET', `/-/projects/${secret.id}/activity`)).statusCode, 302);
    const bob = await createUser(t.app);
    assert.equal((await (await browserFor(t, bob)).request('GET', `/-/projects/${secret.id}/activity`)).statusCode, 404);
    assert.equal((await (await browserFor(t, bob)).request('GET', `/${secret.full_path}/-/activity`)).statusCode, 404);
  });
});
