import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { createUser, type TestUser } from '../helpers/factories.js';

const MUST_BE_ADMIN = { message: '403 Forbidden - Must be admin to use sudo' };
const SUDO_SCOPE = {
  error: 'insufficient_scope',
  error_description: 'The request requires higher privileges than provided by the access token.',
  scope: 'sudo',
};
const notFound = (value: string) => ({ message: `404 User with ID or username '${value}' Not Found` });

describe('Sudo (SPEC "Authentication")', () => {
  let t: TestApp;
  let alice: TestUser;
  let plain: TestUser;
  let plainWithSudo: TestUser;
  let adminWithoutSudo: TestUser;
  before(async () => {
    t = await createTestApp();
    alice = await createUser(t.app, { username: 'Alice_Sudo' });
    plain = await createUser(t.app);
    // Only an administrator's token gets `sudo` (issue 18); one demoted since still holds it.
    plainWithSudo = await createUser(t.app, { admin: true, scopes: ['api', 'sudo'] });
    assert.equal((await t.api('PUT', `/users/${plainWithSudo.user.id}`, { body: { admin: false } })).statusCode, 200);
    adminWithoutSudo = await createUser(t.app, { admin: true, scopes: ['api'] });
  });
  after(() => t.close());

  it('an administrator’s sudo token acts as the user named by ID (Sudo header)', async () => {
    const res = await t.api('GET', '/user', { headers: { sudo: String(alice.user.id) } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().username, 'Alice_Sudo');
    assert.equal(res.json().is_admin, undefined, 'the target’s view, not the administrator’s');
  });

  it('by username, case-insensitively, as the sudo query parameter', async () => {
    for (const value of ['alice_sudo', 'ALICE_SUDO', 'Alice_Sudo']) {
      const res = await t.api('GET', `/user?sudo=${value}`);
      assert.equal(res.statusCode, 200, value);
      assert.equal(res.json().username, 'Alice_Sudo');
    }
  });

  it('the query parameter wins over the header', async () => {
    const res = await t.api('GET', `/user?sudo=${alice.user.id}`, { headers: { sudo: plain.user.username } });
    assert.equal(res.json().username, 'Alice_Sudo');
  });

  it('the request runs with the target’s permissions', async () => {
    const admin = await t.api('POST', '/users', {
      headers: { sudo: alice.user.username },
      body: { username: 'viasudo', name: 'Via Sudo', email: 'viasudo@example.com', password: 'password-123' },
    });
    assert.equal(admin.statusCode, 403);
    assert.deepEqual(admin.json(), { message: '403 Forbidden' });
    const project = await t.api('POST', '/projects', { headers: { sudo: alice.user.username }, body: { name: 'made-as-alice' } });
    assert.equal(project.statusCode, 201);
    assert.equal(project.json().namespace.path, 'Alice_Sudo');
  });

  it('a token holding only sudo passes a route that needs api when Sudo is used', async () => {
    const sudoOnly = await createUser(t.app, { admin: true, scopes: ['sudo'] });
    const plainRes = await t.api('POST', '/projects', { token: sudoOnly.token, body: { name: 'no-sudo-header' } });
    assert.equal(plainRes.statusCode, 403, 'without Sudo the route’s scopes apply');
    const res = await t.api('POST', '/projects', {
      token: sudoOnly.token,
      headers: { sudo: alice.user.username },
      body: { name: 'sudo-only' },
    });
    assert.equal(res.statusCode, 201);
  });

  it('check 1: no authenticated user is 401', async () => {
    const anonymous = await t.api('GET', '/projects?sudo=root', { token: null });
    assert.equal(anonymous.statusCode, 401);
    assert.deepEqual(anonymous.json(), { message: '401 Unauthorized' });
    const unknown = await t.api('GET', '/user', { token: 'bsp_unknown', headers: { sudo: 'root' } });
    assert.equal(unknown.statusCode, 401);
    assert.deepEqual(unknown.json(), { message: '401 Unauthorized' });
  });

  it('check 2: a non-administrator is 403 "Must be admin to use sudo", before scope and target', async () => {
    for (const [who, target] of [
      [plainWithSudo, alice.user.username],
      [plain, alice.user.username],
      [plainWithSudo, 'no-such-user'],
    ] as const) {
      const res = await t.api('GET', '/user', { token: who.token, headers: { sudo: target } });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), MUST_BE_ADMIN);
    }
  });

  it('check 4: an administrator token without the sudo scope is 403 insufficient_scope "sudo", before the target', async () => {
    for (const target of [alice.user.username, 'no-such-user']) {
      const res = await t.api('GET', '/user', { token: adminWithoutSudo.token, headers: { sudo: target } });
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), SUDO_SCOPE);
      assert.equal(res.headers['www-authenticate'], undefined);
    }
  });

  it('check 5: an unknown target is 404 naming the value as given', async () => {
    for (const value of ['no-such-user', '999999', 'No-Such-User']) {
      const res = await t.api('GET', `/user?sudo=${value}`);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), notFound(value));
    }
    const header = await t.api('GET', '/user', { headers: { sudo: 'ghost' } });
    assert.deepEqual(header.json(), notFound('ghost'));
  });

  it('an expired sudo token is 401 invalid_token before any Sudo check', async () => {
    const tomorrow = new Date(t.clock.now() + 86_400_000).toISOString().slice(0, 10);
    const created = await t.api('POST', '/user/personal_access_tokens', {
      body: { name: 'brief', scopes: ['api', 'sudo'], expires_at: tomorrow },
    });
    assert.equal(created.statusCode, 201);
    t.manual?.advance(2 * 86_400_000);
    const res = await t.api('GET', '/user', { token: created.json().token, headers: { sudo: alice.user.username } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_token');
    assert.equal((await t.api('GET', '/user', { token: ROOT_TOKEN, headers: { sudo: alice.user.username } })).statusCode, 200);
  });
});
