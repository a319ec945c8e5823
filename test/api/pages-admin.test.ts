// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestBrowser } from '../helpers/auth-browser.js';
import { createProject } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';
import type { TestApp } from '../helpers/app.js';
import type { TestUser } from '../helpers/factories.js';

/** The admin area as an administrator uses it, and as everyone else is turned away from it. */
describe('admin area pages', () => {
  let t: TestApp;
  let alice: TestUser;
  let root: TestBrowser;
  let plain: TestBrowser;

  before(async () => {
    ({ t, alice } = await appWithUsers(['alice']));
    root = new TestBrowser(t.app);
    assert.equal((await root.signIn('root', 'root-password-123')).statusCode, 303);
    plain = new TestBrowser(t.app);
    assert.equal((await plain.signIn(alice.user.username, 'password-123')).statusCode, 303);
  });
  after(() => t.close());

  it('shows the system information: version, database kind and jobs waiting', async () => {
    const page = await root.request('GET', '/admin');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /id="system-version">0\.1\.0</);
    assert.match(
      page.body,
      new RegExp(`id="system-database">${process.env.BASALT_TEST_DB === 'postgres' ? 'PostgreSQL' : '(SQLite|PostgreSQL)'}<`),
    );
    assert.match(page.body, /id="system-jobs-queued">\d+</);
  });

  it('turns away everyone but administrators with a page that says so, and sends visitors to sign in', async () => {
    for (const url of ['/admin', '/admin/users', '/admin/users/new', '/admin/storages', `/admin/users/root`]) {
      const refused = await plain.request('GET', url);
      assert.equal(refused.statusCode, 403, url);
      assert.match(refused.headers['content-type'] as string, /text\/html/);
      assert.match(refused.body, /Only administrators can open this page/);
      const anonymous = await new TestBrowser(t.app).request('GET', url);
      assert.equal(anonymous.statusCode, 302, url);
      assert.equal(anonymous.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(url)}`);
    }
    const csrf = await plain.csrf();
    const post = await plain.request('POST', `/admin/users/${alice.user.username}/admin/grant`, { form: { authenticity_token: csrf } });
    assert.equal(post.statusCode, 403);
    assert.equal((await t.app.modules.identity.users.get(alice.user.id)).is_admin, 0);
  });

  it('creates a user, showing each refused field beside it with the input kept', async () => {
    const form = await root.request('GET', '/admin/users/new');
    const csrf = TestBrowser.csrfOf(form.body);
    const bad = await root.request('POST', '/admin/users', {
      form: { authenticity_token: csrf, name: 'Carol', username: 'carol-admin-page', email: 'not-an-email', password: 'short' },
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /id="field-email-error">is invalid</);
    assert.match(bad.body, /id="field-password-error">is too short/);
    assert.match(bad.body, /value="carol-admin-page"/, 'the username typed is kept');
    assert.doesNotMatch(bad.body, /value="short"/, 'a password is never sent back');

    const created = await root.request('POST', '/admin/users', {
      form: {
        authenticity_token: csrf,
        name: 'Carol',
        username: 'carol-admin-page',
        email: 'carol@example.com',
        password: 'carol-password-1',
      },
    });
    assert.equal(created.statusCode, 303);
    assert.equal(created.headers.location, '/admin/users/carol-admin-page');
    const shown = await root.request('GET', created.headers.location);
    assert.match(shown.body, /User carol-admin-page was created\./, 'the flash shows once');
    assert.doesNotMatch((await root.request('GET', created.headers.location)).body, /was created/);
    const carol = new TestBrowser(t.app);
    assert.equal((await carol.signIn('carol-admin-page', 'carol-password-1')).statusCode, 303);

    const taken = await root.request('POST', '/admin/users', {
      form: { authenticity_token: csrf, name: 'Carol', username: 'carol-admin-page', email: 'carol2@example.com' },
    });
    assert.equal(taken.statusCode, 400);
    assert.match(taken.body, /Username has already been taken/);
  });

  it('blocks and unblocks, grants and takes the administrator role, and resets a password ending the sessions', async () => {
    const { user } = await t.app.modules.identity.users
      .create({ username: 'dave-admin-page', name: 'Dave', email: 'dave@example.com', password: 'dave-password-1' })
      .then((row) => ({ user: row }));
    const dave = new TestBrowser(t.app);
    assert.equal((await dave.signIn('dave-admin-page', 'dave-password-1')).statusCode, 303);
    const csrf = await root.csrf();
    const act = (suffix: string, form: Record<string, string> = {}) =>
      root.request('POST', `/admin/users/dave-admin-page/${suffix}`, { form: { authenticity_token: csrf, ...form } });

    assert.equal((await act('block')).statusCode, 303);
    assert.equal((await t.app.modules.identity.users.get(user.id)).state, 'blocked');
    assert.equal((await dave.request('GET', '/profile')).statusCode, 302, 'a blocked user is signed out');
    assert.match((await root.request('GET', '/admin/users/dave-admin-page')).body, /Unblock user/);
    assert.equal((await act('unblock')).statusCode, 303);
    assert.equal((await t.app.modules.identity.users.get(user.id)).state, 'active');

    assert.equal((await act('admin/grant')).statusCode, 303);
    assert.equal((await t.app.modules.identity.users.get(user.id)).is_admin, 1);
    assert.equal((await act('admin/revoke')).statusCode, 303);
    assert.equal((await t.app.modules.identity.users.get(user.id)).is_admin, 0);

    const again = new TestBrowser(t.app);
    assert.equal((await again.signIn('dave-admin-page', 'dave-password-1')).statusCode, 303);
    const short = await act('password', { password: 'x' });
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /id="field-password-error">is too short/);
    assert.equal((await act('password', { password: 'dave-new-password' })).statusCode, 303);
    assert.equal((await again.request('GET', '/profile')).statusCode, 302, 'the sessions ended');
    assert.equal((await new TestBrowser(t.app).signIn('dave-admin-page', 'dave-new-password')).headers.location, '/');
  });

  it('keeps an administrator from blocking themselves or dropping their own role', async () => {
    const csrf = await root.csrf();
    const block = await root.request('POST', '/admin/users/root/block', { form: { authenticity_token: csrf } });
    assert.equal(block.statusCode, 303);
    assert.match((await root.request('GET', '/admin/users/root')).body, /You cannot block yourself/);
    const rootRow = await t.app.modules.identity.users.findByUsername('root');
    assert.equal(rootRow?.state, 'active');
    assert.equal(rootRow?.is_admin, 1);
  });

  it('lists users with search and paging, and storages with their projects', async () => {
    const list = await root.request('GET', '/admin/users?search=carol');
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /carol-admin-page/);
    assert.doesNotMatch(list.body, /dave-admin-page/);
    assert.equal((await root.request('GET', '/admin/users?page=0')).statusCode, 400);

    const project = await createProject(t.app, alice);
    const storages = await root.request('GET', '/admin/storages');
    assert.equal(storages.statusCode, 200);
    assert.match(storages.body, /href="\/admin\/storages\/default"/);
    const storage = await root.request('GET', '/admin/storages/default');
    assert.match(storage.body, new RegExp(`href="/${project.full_path}"`));
    assert.equal((await root.request('GET', '/admin/storages/nowhere')).statusCode, 404);
  });

  it('registers, edits, renews and deletes an instance-wide OAuth application', async () => {
    const page = await root.request('GET', '/admin/applications');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Instance-wide applications \(0\)/);
    const csrf = TestBrowser.csrfOf(page.body);
    const refused = await root.request('POST', '/admin/applications', {
      form: { authenticity_token: csrf, name: 'Grafana', redirect_uri: 'not a uri', scopes: 'openid' },
    });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /value="Grafana"/, 'the name typed is kept');
    const created = await root.request('POST', '/admin/applications', {
      form: { authenticity_token: csrf, name: 'Grafana', redirect_uri: 'https://grafana.example/login/gitlab', scopes: 'openid' },
    });
    assert.equal(created.statusCode, 200);
    const secret = /id="application-secret">([^<]+)</.exec(created.body)?.[1];
    assert.match(secret ?? '', /^bss_/, 'the secret is shown once');
    const row = (await t.app.modules.oauth.applications.list(null)).find((app) => app.name === 'Grafana');
    assert.ok(row);
    assert.equal(row.owner_id, null, 'it belongs to no user');
    assert.match((await root.request('GET', '/admin/applications')).body, /Instance-wide applications \(1\)/);
    assert.doesNotMatch((await plain.request('GET', '/-/user_settings/applications')).body, /Grafana/, "not listed as anyone's own");

    const edited = await root.request('POST', `/admin/applications/${row.id}`, {
      form: { authenticity_token: csrf, name: 'Grafana EU', redirect_uri: 'https://grafana.example/login/gitlab', scopes: 'openid' },
    });
    assert.equal(edited.statusCode, 303);
    assert.match((await root.request('GET', '/admin/applications')).body, /Application Grafana EU was updated\./);
    const renewed = await root.request('POST', `/admin/applications/${row.id}/renew`, { form: { authenticity_token: csrf } });
    assert.notEqual(/id="application-secret">([^<]+)</.exec(renewed.body)?.[1], secret);
    assert.equal(
      (await root.request('POST', `/admin/applications/${row.id}/delete`, { form: { authenticity_token: csrf } })).statusCode,
      303,
    );
    assert.equal(
      (await t.app.modules.oauth.applications.list(null)).find((app) => app.id === row.id),
      undefined,
    );

    const other = await plain.request('GET', '/admin/applications');
    assert.equal(other.statusCode, 403);
  });
});
