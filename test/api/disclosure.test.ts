import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

describe('no disclosure to those who cannot see', () => {
  let t: TestApp;
  let owner: TestUser;
  let outsider: TestUser;
  before(async () => ({ t, owner, outsider } = await appWithUsers(['owner', 'outsider'])));
  after(() => t.close());

  const ids = (res: { json(): unknown }) => (res.json() as { id: number }[]).map((u) => u.id);

  it('GET /users?search= matches private e-mail addresses only for administrators', async () => {
    const target = await createUser(t.app, { username: `mailowner${Date.now().toString(36)}` });
    await t.api('PUT', `/users/${target.user.id}`, { body: { email: 'secret.person@private.test', public_email: 'shown@public.test' } });
    // Anonymous callers must name a username; with it, a pattern over the address told whether it matched.
    const anonymous = await t.api('GET', `/users?username=${target.user.username}&search=secret.p`, { token: null });
    assert.equal(anonymous.statusCode, 200);
    assert.deepEqual(ids(anonymous), []);
    const signedIn = await t.api('GET', '/users?search=private.test', { token: outsider.token });
    assert.deepEqual(ids(signedIn), []);
    const whole = await t.api('GET', '/users?search=secret.person@private.test', { token: outsider.token });
    assert.deepEqual(ids(whole), []);
    // The public address matches when given whole; the name and username as before.
    assert.deepEqual(ids(await t.api('GET', '/users?search=Shown@Public.test', { token: outsider.token })), [target.user.id]);
    assert.deepEqual(ids(await t.api('GET', `/users?search=${target.user.username}`, { token: outsider.token })), [target.user.id]);
    // Administrators search addresses.
    assert.deepEqual(ids(await t.api('GET', '/users?search=secret.p')), [target.user.id]);
  });

  it('a private profile hides its bio and details from others in GET /users/:id', async () => {
    const target = await createUser(t.app);
    await t.api('PUT', `/users/${target.user.id}`, {
      body: { bio: 'My private life', public_email: 'me@public.test', private_profile: true },
    });
    const other = await t.api('GET', `/users/${target.user.id}`, { token: outsider.token });
    assert.equal(other.statusCode, 200);
    const body = other.json();
    assert.equal(body.username, target.user.username);
    assert.equal(body.bio, '');
    assert.equal(body.public_email, '');
    assert.equal('created_at' in body, false);
    assert.equal('followers' in body, false);
    assert.equal('following' in body, false);
    // The owner and administrators still read it.
    const self = await t.api('GET', `/users/${target.user.id}`, { token: target.token });
    assert.equal(self.json().bio, 'My private life');
    const admin = await t.api('GET', `/users/${target.user.id}`);
    assert.equal(admin.json().bio, 'My private life');
    assert.equal(typeof admin.json().created_at, 'string');
    // A public profile shows them to anyone signed in.
    await t.api('PUT', `/users/${target.user.id}`, { body: { private_profile: false } });
    const open = await t.api('GET', `/users/${target.user.id}`, { token: outsider.token });
    assert.equal(open.json().bio, 'My private life');
    assert.equal(typeof open.json().created_at, 'string');
  });

  it('a renamed private project answers 301 only to those who can read it, 404 to others', async () => {
    const project = await createProject(t.app, owner, { visibility: 'private', path: `hidden${Date.now().toString(36)}` });
    const oldRef = encodeURIComponent(project.full_path);
    assert.equal(
      (await t.api('PUT', `/projects/${project.id}`, { token: owner.token, body: { path: `${project.path}-new` } })).statusCode,
      200,
    );

    const member = await t.api('GET', `/projects/${oldRef}`, { token: owner.token });
    assert.equal(member.statusCode, 301);
    for (const token of [outsider.token, null]) {
      const res = await t.api('GET', `/projects/${oldRef}`, { token });
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers.location, undefined);
      assert.deepEqual(res.json(), { message: '404 Project Not Found' });
      assert.equal((await t.api('PUT', `/projects/${oldRef}`, { token, body: { description: 'x' } })).statusCode, token ? 404 : 401);
      assert.equal((await t.api('GET', `/projects/${oldRef}/issues`, { token })).statusCode, 404);
    }
    // The activity page's redirect follows the same rule.
    const browser = new TestBrowser(t.app);
    await browser.signIn(outsider.user.username, 'password-123');
    const page = await browser.request('GET', `/-/projects/${oldRef}/activity`);
    assert.equal(page.statusCode, 404);
    const ownerBrowser = new TestBrowser(t.app);
    await ownerBrowser.signIn(owner.user.username, 'password-123');
    assert.equal((await ownerBrowser.request('GET', `/-/projects/${oldRef}/activity`)).statusCode, 301);
  });

  it('a renamed private group answers 301 only to those who can read it, 404 to others', async () => {
    const group = await createGroup(t.app, owner, { visibility: 'private' });
    assert.equal((await t.api('PUT', `/groups/${group.id}`, { token: owner.token, body: { path: `${group.path}-new` } })).statusCode, 200);
    assert.equal((await t.api('GET', `/groups/${group.path}`, { token: owner.token })).statusCode, 301);
    for (const token of [outsider.token, null]) {
      const res = await t.api('GET', `/groups/${group.path}`, { token });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { message: '404 Group Not Found' });
    }
  });

  it('the notifications page lists only projects and groups the user can still see', async () => {
    const member = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'private' });
    const group = await createGroup(t.app, owner, { visibility: 'private' });
    await addMember(t.app, 'project', project.id, member, 30);
    await addMember(t.app, 'namespace', group.id, member, 30);
    const level = { body: { level: 'watch' }, token: member.token };
    assert.equal((await t.api('PUT', `/projects/${project.id}/notification_settings`, level)).statusCode, 200);
    assert.equal((await t.api('PUT', `/groups/${group.id}/notification_settings`, level)).statusCode, 200);

    const browser = new TestBrowser(t.app);
    await browser.signIn(member.user.username, 'password-123');
    const before = await browser.request('GET', '/-/profile/notifications');
    assert.match(before.body, new RegExp(`id="projects-${project.id}"`));
    assert.match(before.body, new RegExp(`id="groups-${group.id}"`));

    assert.equal((await t.api('DELETE', `/projects/${project.id}/members/${member.user.id}`, { token: owner.token })).statusCode, 204);
    assert.equal((await t.api('DELETE', `/groups/${group.id}/members/${member.user.id}`, { token: owner.token })).statusCode, 204);
    const afterRemoval = await browser.request('GET', '/-/profile/notifications');
    assert.equal(afterRemoval.statusCode, 200);
    assert.doesNotMatch(afterRemoval.body, new RegExp(`id="projects-${project.id}"`));
    assert.doesNotMatch(afterRemoval.body, new RegExp(`id="groups-${group.id}"`));
    assert.doesNotMatch(afterRemoval.body, new RegExp(project.full_path));
    assert.doesNotMatch(afterRemoval.body, new RegExp(group.full_path));
  });
});
