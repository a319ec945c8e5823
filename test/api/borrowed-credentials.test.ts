import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { issueTokens, registerApp, sessionCookie } from '../helpers/oauth.js';

const NOT_PERMITTED = { message: '403 Forbidden - Not permitted to create' };
const BLOCKED = { message: '403 Forbidden - Your account has been blocked.' };
const DAY = 86_400_000;

describe('borrowed credentials cannot mint lasting ones', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { MAX_ACCESS_TOKEN_LIFETIME_DAYS: '30' } });
  });
  after(() => t.close());

  const dayIn = (days: number) => new Date(t.clock.now() + days * DAY).toISOString().slice(0, 10);
  const mint = (token: string, headers: Record<string, string> = {}) =>
    t.api('POST', '/user/personal_access_tokens', {
      token: headers.authorization ? null : token,
      headers,
      body: { name: 'lasting', scopes: ['api'] },
    });
  const impersonationToken = async (user: TestUser, scopes = ['api']) => {
    const res = await t.api('POST', `/users/${user.user.id}/impersonation_tokens`, { body: { name: 'look', scopes } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: number; token: string }>();
  };

  it('an OAuth token cannot create a personal access token', async () => {
    const alice = await createUser(t.app);
    const client = await registerApp(t);
    const { access_token } = await issueTokens(t, await sessionCookie(t, alice), client, { scope: 'api' });
    const res = await mint(access_token, { authorization: `Bearer ${access_token}` });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), NOT_PERMITTED);
    // The user's own token still may.
    assert.equal((await mint(alice.token)).statusCode, 201);
  });

  it('an impersonation token cannot create a personal access token', async () => {
    const bob = await createUser(t.app);
    const { token } = await impersonationToken(bob);
    const res = await mint(token);
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), NOT_PERMITTED);
    const listed = await t.api('GET', '/personal_access_tokens', { token: bob.token });
    assert.deepEqual(
      listed.json().map((row: { name: string }) => row.name),
      ['test'],
    );
  });

  it('a project bot token cannot create a personal access token', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    const created = await t.api('POST', `/projects/${project.id}/access_tokens`, {
      token: owner.token,
      body: { name: 'bot', scopes: ['api'], access_level: 30 },
    });
    assert.equal(created.statusCode, 201, created.body);
    const res = await mint(created.json().token);
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), NOT_PERMITTED);
  });

  it('sudo and admin_mode go only on tokens of administrators, however the token is made', async () => {
    const carol = await createUser(t.app);
    for (const scope of ['sudo', 'admin_mode']) {
      const own = await t.api('POST', '/user/personal_access_tokens', { token: carol.token, body: { name: 'x', scopes: ['api', scope] } });
      assert.equal(own.statusCode, 400, scope);
      assert.deepEqual(own.json(), { message: { scopes: ['can only contain available scopes'] } });
      const byAdmin = await t.api('POST', `/users/${carol.user.id}/personal_access_tokens`, { body: { name: 'x', scopes: [scope] } });
      assert.equal(byAdmin.statusCode, 400, scope);
      const impersonation = await t.api('POST', `/users/${carol.user.id}/impersonation_tokens`, { body: { name: 'x', scopes: [scope] } });
      assert.equal(impersonation.statusCode, 400, scope);
    }
    const admin = await createUser(t.app, { admin: true });
    const adminOwn = await t.api('POST', '/user/personal_access_tokens', {
      token: admin.token,
      body: { name: 'x', scopes: ['sudo', 'admin_mode'] },
    });
    assert.equal(adminOwn.statusCode, 201);
  });

  it('a new token without expires_at expires at the maximum lifetime; one past it is 400', async () => {
    const dave = await createUser(t.app);
    const plain = await t.api('POST', '/user/personal_access_tokens', { token: dave.token, body: { name: 'p', scopes: ['api'] } });
    assert.equal(plain.statusCode, 201);
    assert.equal(plain.json().expires_at, dayIn(30));
    const atMost = await t.api('POST', '/user/personal_access_tokens', {
      token: dave.token,
      body: { name: 'p', scopes: ['api'], expires_at: dayIn(30) },
    });
    assert.equal(atMost.statusCode, 201);
    const past = await t.api('POST', '/user/personal_access_tokens', {
      token: dave.token,
      body: { name: 'p', scopes: ['api'], expires_at: dayIn(31) },
    });
    assert.equal(past.statusCode, 400);
    assert.deepEqual(past.json(), { message: { expires_at: [`must be before ${dayIn(30)}`] } });

    const impersonation = await impersonationToken(dave);
    const row = await t.app.modules.identity.tokens.get(impersonation.id);
    assert.equal(new Date(row.expires_at ?? 0).toISOString().slice(0, 10), dayIn(30));

    const project = await createProject(t.app, dave);
    const bot = await t.api('POST', `/projects/${project.id}/access_tokens`, { token: dave.token, body: { name: 'b', scopes: ['api'] } });
    assert.equal(bot.statusCode, 201, bot.body);
    assert.equal(bot.json().expires_at, dayIn(30));
    const botPast = await t.api('POST', `/projects/${project.id}/access_tokens`, {
      token: dave.token,
      body: { name: 'b', scopes: ['api'], expires_at: dayIn(31) },
    });
    assert.equal(botPast.statusCode, 400);
  });

  it('rotation, by id or by the token itself, cannot extend a token past the maximum lifetime', async () => {
    const erin = await createUser(t.app);
    const created = await t.api('POST', '/user/personal_access_tokens', { token: erin.token, body: { name: 'r', scopes: ['api'] } });
    const byId = await t.api('POST', `/personal_access_tokens/${created.json().id}/rotate`, {
      token: erin.token,
      body: { expires_at: dayIn(31) },
    });
    assert.equal(byId.statusCode, 400);
    assert.deepEqual(byId.json(), { message: { expires_at: [`must be before ${dayIn(30)}`] } });
    const self = await t.api('POST', '/personal_access_tokens/self/rotate', {
      token: created.json().token,
      body: { expires_at: dayIn(365) },
    });
    assert.equal(self.statusCode, 400);
    // Within the maximum it rotates, and the default stays a week.
    const rotated = await t.api('POST', '/personal_access_tokens/self/rotate', { token: created.json().token, body: {} });
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.equal(rotated.json().expires_at, dayIn(7));
  });
});

describe('impersonation tokens belong to the administrators who made them', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('the impersonated user neither sees, rotates nor revokes them; administrators still do', async () => {
    const frank = await createUser(t.app);
    const made = await t.api('POST', `/users/${frank.user.id}/impersonation_tokens`, { body: { name: 'look', scopes: ['api'] } });
    const { id, token } = made.json<{ id: number; token: string }>();
    const asFrank = { token: frank.token };
    const listed = await t.api('GET', '/personal_access_tokens', asFrank);
    assert.ok(listed.json().every((row: { id: number }) => row.id !== id));
    assert.equal((await t.api('GET', `/personal_access_tokens/${id}`, asFrank)).statusCode, 404);
    assert.equal((await t.api('POST', `/personal_access_tokens/${id}/rotate`, { ...asFrank, body: {} })).statusCode, 404);
    assert.equal((await t.api('DELETE', `/personal_access_tokens/${id}`, asFrank)).statusCode, 404);
    // Nor through the token itself, which acts as the user.
    assert.equal((await t.api('GET', '/personal_access_tokens/self', { token })).statusCode, 404);
    assert.equal((await t.api('POST', '/personal_access_tokens/self/rotate', { token, body: {} })).statusCode, 404);
    assert.equal((await t.api('DELETE', '/personal_access_tokens/self', { token })).statusCode, 404);
    assert.equal((await t.api('GET', '/user', { token })).statusCode, 200);
    // Administrators manage it where they made it.
    assert.equal((await t.api('GET', `/users/${frank.user.id}/impersonation_tokens/${id}`)).json().active, true);
    assert.equal((await t.api('DELETE', `/users/${frank.user.id}/impersonation_tokens/${id}`)).statusCode, 204);
    assert.equal((await t.api('GET', '/user', { token })).statusCode, 401);
  });

  it('Sudo to a blocked user is refused with 403', async () => {
    const grace = await createUser(t.app);
    assert.equal((await t.api('GET', '/user', { headers: { sudo: grace.user.username } })).statusCode, 200);
    assert.equal((await t.api('POST', `/users/${grace.user.id}/block`)).statusCode, 201);
    for (const value of [grace.user.username, String(grace.user.id)]) {
      const res = await t.api('GET', '/user', { headers: { sudo: value } });
      assert.equal(res.statusCode, 403, value);
      assert.deepEqual(res.json(), BLOCKED);
    }
    const query = await t.api('POST', `/projects?sudo=${grace.user.id}`, { body: { name: 'as-blocked' } });
    assert.equal(query.statusCode, 403);
  });
});
