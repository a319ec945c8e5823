import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { issueTokens, registerApp, sessionCookie } from '../helpers/oauth.js';

const EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';
const REVOKED = 'Token was revoked. You have to re-authorize from the user.';
const IMPERSONATION_OFF = 'Token is an impersonation token but impersonation was disabled.';
const INSUFFICIENT = 'The request requires higher privileges than provided by the access token.';
const wwwAuthenticate = (description: string) =>
  `Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="${description}"`;

describe('personal access tokens on the API', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('is accepted as PRIVATE-TOKEN, private_token and Authorization: Bearer', async () => {
    const alice = await createUser(t.app);
    const header = await t.api('GET', '/user', { token: alice.token });
    assert.equal(header.json().username, alice.user.username);
    const query = await t.api('GET', `/user?private_token=${encodeURIComponent(alice.token)}`, { token: null });
    assert.equal(query.statusCode, 200);
    assert.equal(query.json().username, alice.user.username);
    const bearer = await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${alice.token}` } });
    assert.equal(bearer.statusCode, 200);
    assert.equal(bearer.json().username, alice.user.username);
  });

  it('an unknown token is 401 {"message":"401 Unauthorized"} without WWW-Authenticate, on any route that reads credentials', async () => {
    for (const url of ['/user', '/projects']) {
      const res = await t.api('GET', url, { token: 'bsp_not-a-token' });
      assert.equal(res.statusCode, 401, url);
      assert.deepEqual(res.json(), { message: '401 Unauthorized' });
      assert.equal(res.headers['www-authenticate'], undefined);
    }
  });

  it('the secret is shown once and stored only as its SHA-256', async () => {
    const created = await t.api('POST', '/user/personal_access_tokens', { body: { name: 'once', scopes: ['api'] } });
    assert.equal(created.statusCode, 201);
    const secret: string = created.json().token;
    assert.match(secret, /^bsp_[A-Za-z0-9_-]{40,}$/);
    const shown = await t.api('GET', `/personal_access_tokens/${created.json().id}`);
    assert.equal(shown.json().token, undefined);
    const rows = await t.database.handle.db.selectFrom('personal_access_tokens').selectAll().execute();
    assert.ok(rows.every((row) => !JSON.stringify(row).includes(secret)));
  });

  it('an expired token is 401 invalid_token with WWW-Authenticate', async () => {
    const tomorrow = new Date(t.clock.now() + 86_400_000).toISOString().slice(0, 10);
    const created = await t.api('POST', '/user/personal_access_tokens', { body: { name: 'short', scopes: ['api'], expires_at: tomorrow } });
    assert.equal(created.statusCode, 201);
    assert.equal((await t.api('GET', '/user', { token: created.json().token })).statusCode, 200);
    t.manual?.advance(2 * 86_400_000);
    const res = await t.api('GET', '/user', { token: created.json().token });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'invalid_token', error_description: EXPIRED });
    assert.equal(res.headers['www-authenticate'], wwwAuthenticate(EXPIRED));
  });

  it('a revoked token is 401 invalid_token with WWW-Authenticate, at once', async () => {
    const created = await t.api('POST', '/user/personal_access_tokens', { body: { name: 'soon-revoked', scopes: ['api'] } });
    const token: string = created.json().token;
    assert.equal((await t.api('GET', '/user', { token })).statusCode, 200);
    assert.equal((await t.api('DELETE', `/personal_access_tokens/${created.json().id}`)).statusCode, 204);
    const res = await t.api('GET', '/user', { token });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'invalid_token', error_description: REVOKED });
    assert.equal(res.headers['www-authenticate'], wwwAuthenticate(REVOKED));
  });

  it('last_used_at is set after the token is used', async () => {
    const created = await t.api('POST', '/user/personal_access_tokens', { body: { name: 'used', scopes: ['read_user'] } });
    const id: number = created.json().id;
    assert.equal(created.json().last_used_at, null);
    assert.equal((await t.api('GET', '/user', { token: created.json().token })).statusCode, 200);
    // Writes are batched off the request path; flushing stands in for the one-second timer.
    await t.app.modules.identity.tokens.flushTouches();
    const shown = await t.api('GET', `/personal_access_tokens/${id}`);
    assert.equal(shown.json().last_used_at, new Date(t.clock.now()).toISOString());
  });

  it('a blocked user’s token is refused', async () => {
    const bob = await createUser(t.app);
    assert.equal((await t.api('POST', `/users/${bob.user.id}/block`)).statusCode, 201);
    // The positive-lookup cache lives 5 s; move past it.
    t.manual?.advance(10_000);
    const res = await t.api('GET', '/user', { token: bob.token });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden - Your account has been blocked.' });
  });
});

describe('deploy tokens are refused on the API', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('a DEPLOY-TOKEN header is 401, also on routes open to anonymous callers and beside a valid token', async () => {
    for (const [url, token] of [
      ['/user', null],
      ['/projects', null],
      ['/projects', ROOT_TOKEN],
    ] as const) {
      const res = await t.api('GET', url, { token, headers: { 'deploy-token': 'gldt-abcdefghijklmnopqrst' } });
      assert.equal(res.statusCode, 401, url);
      assert.deepEqual(res.json(), { message: '401 Unauthorized' });
    }
  });

  it('a deploy-looking token passed as a personal token or Basic password authenticates nobody', async () => {
    const asPrivate = await t.api('GET', '/projects', { token: 'gldt-abcdefghijklmnopqrst' });
    assert.equal(asPrivate.statusCode, 401);
    assert.deepEqual(asPrivate.json(), { message: '401 Unauthorized' });
    const basic = Buffer.from('deploy-user:gldt-abcdefghijklmnopqrst').toString('base64');
    const asBasic = await t.api('GET', '/user', { token: null, headers: { authorization: `Basic ${basic}` } });
    assert.equal(asBasic.statusCode, 401);
    assert.deepEqual(asBasic.json(), { message: '401 Unauthorized' });
  });
});

describe('impersonation tokens', () => {
  let on: TestApp;
  let off: TestApp;
  before(async () => {
    on = await createTestApp();
    off = await createTestApp({ env: { BASALT_IMPERSONATION_ENABLED: 'false' } });
  });
  after(async () => {
    await on.close();
    await off.close();
  });

  const impersonate = async (t: TestApp) => {
    const carol = await createUser(t.app);
    const res = await t.api('POST', `/users/${carol.user.id}/impersonation_tokens`, { body: { name: 'look', scopes: ['api'] } });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().impersonation, true);
    return { carol, token: res.json().token as string };
  };

  it('act as the user they were made for (impersonation is on by default)', async () => {
    const { carol, token } = await impersonate(on);
    const res = await on.api('GET', '/user', { token });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().username, carol.user.username);
  });

  it('only administrators create them', async () => {
    const dave = await createUser(on.app);
    const res = await on.api('POST', `/users/${dave.user.id}/impersonation_tokens`, {
      token: dave.token,
      body: { name: 'x', scopes: ['api'] },
    });
    assert.equal(res.statusCode, 403);
  });

  it('are refused with the exact 401 body when impersonation is disabled', async () => {
    const { token } = await impersonate(off);
    const ways: Record<string, string>[] = [{ 'private-token': token }, { authorization: `Bearer ${token}` }];
    for (const headers of ways) {
      const res = await off.api('GET', '/user', { token: null, headers });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { error: 'invalid_token', error_description: IMPERSONATION_OFF });
      assert.equal(res.headers['www-authenticate'], wwwAuthenticate(IMPERSONATION_OFF));
    }
    // Personal tokens keep working.
    assert.equal((await off.api('GET', '/user')).statusCode, 200);
  });
});

describe('scope matrix', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const SCOPES = ['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode'] as const;
  // What each request accepts (api everywhere, read_api on GET, read_user on the users API).
  const REQUESTS = [
    { method: 'GET', url: '/user', accepts: ['api', 'read_api', 'read_user'], ok: 200 },
    { method: 'GET', url: '/projects', accepts: ['api', 'read_api'], ok: 200 },
    { method: 'POST', url: '/projects', accepts: ['api'], ok: 201 },
    { method: 'POST', url: '/users', accepts: ['api'], ok: 201, admin: true },
  ] as const;

  let n = 0;
  const bodyFor = (url: string) => {
    n += 1;
    return url === '/projects'
      ? { name: `scoped-${n}` }
      : { username: `made${n}`, name: `Made ${n}`, email: `made${n}@example.com`, password: 'password-123' };
  };

  for (const scope of SCOPES) {
    it(`a token with only ${scope}`, async () => {
      // An administrator, so the admin route is decided by scope alone.
      const owner = await createUser(t.app, { admin: true, scopes: [scope] });
      for (const request of REQUESTS) {
        const res = await t.api(request.method, request.url, {
          token: owner.token,
          ...(request.method === 'POST' ? { body: bodyFor(request.url) } : {}),
        });
        const label = `${scope}: ${request.method} ${request.url}`;
        if ((request.accepts as readonly string[]).includes(scope)) {
          assert.equal(res.statusCode, request.ok, label);
        } else {
          assert.equal(res.statusCode, 403, label);
          assert.deepEqual(
            res.json(),
            { error: 'insufficient_scope', error_description: INSUFFICIENT, scope: request.accepts.join(' ') },
            label,
          );
          assert.equal(res.headers['www-authenticate'], undefined, `${label}: no WWW-Authenticate on 403`);
        }
      }
    });
  }

  it('the admin route refuses a non-administrator with the right scope (403)', async () => {
    const plain = await createUser(t.app);
    const res = await t.api('POST', '/users', { token: plain.token, body: bodyFor('/users') });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  });
});

describe('/personal_access_tokens/self with a credential that is not a token of that table', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it("an administrator's OAuth token names no personal token: 404, and the personal token with its row id is untouched", async () => {
    const admin = await createUser(t.app, { admin: true });
    const client = await registerApp(t);
    const { access_token: oauthToken } = await issueTokens(t, await sessionCookie(t, admin), client);
    // OAuth tokens carry their row id (bso_<id>_<secret>); make sure a personal token has that id too.
    const oauthId = Number(oauthToken.split('_')[1]);
    let victim: { id: number; token: string } | undefined;
    while (!victim || victim.id < oauthId) {
      const created = await t.api('POST', '/user/personal_access_tokens', { token: admin.token, body: { name: 'other', scopes: ['api'] } });
      assert.equal(created.statusCode, 201);
      victim = created.json();
    }
    const same = (await t.database.handle.db.selectFrom('personal_access_tokens').select('id').where('id', '=', oauthId).executeTakeFirst())
      ?.id;
    assert.equal(same, oauthId);
    const asOauth = { token: null, headers: { authorization: `Bearer ${oauthToken}` } };
    for (const [method, url] of [
      ['GET', '/personal_access_tokens/self'],
      ['POST', '/personal_access_tokens/self/rotate'],
      ['DELETE', '/personal_access_tokens/self'],
    ] as const) {
      const res = await t.api(method, url, asOauth);
      assert.equal(res.statusCode, 404, `${method} ${url}`);
      assert.deepEqual(res.json(), { message: '404 Personal Access Token Not Found' });
    }
    const shown = await t.api('GET', `/personal_access_tokens/${oauthId}`);
    assert.equal(shown.json().revoked, false);
    assert.equal((await t.api('GET', '/user', { token: victim.token })).statusCode, 200);
    assert.equal((await t.api('GET', '/user')).statusCode, 200);
  });
});

describe('a rotated-out personal token presented again for rotation', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const rotateSelf = (token: string) => t.api('POST', '/personal_access_tokens/self/rotate', { token });

  it('elsewhere is only refused; on a rotation route it revokes the whole family, successors included', async () => {
    const alice = await createUser(t.app);
    const first = await rotateSelf(alice.token);
    assert.equal(first.statusCode, 200);
    const second = await rotateSelf(first.json().token);
    assert.equal(second.statusCode, 200);
    const live: string = second.json().token;
    const unrelated = await t.api('POST', '/user/personal_access_tokens', { token: live, body: { name: 'other', scopes: ['api'] } });
    assert.equal(unrelated.statusCode, 201);

    // The oldest secret on an ordinary route: refused, nothing else changes.
    const ordinary = await t.api('GET', '/user', { token: alice.token });
    assert.equal(ordinary.statusCode, 401);
    assert.equal((await t.api('GET', '/user', { token: live })).statusCode, 200);

    // The same secret on a rotation route: refused as revoked, and the chain's live token ends with it.
    const replay = await rotateSelf(alice.token);
    assert.equal(replay.statusCode, 401);
    assert.equal(replay.json().error, 'invalid_token');
    const after = await t.api('GET', '/user', { token: live });
    assert.equal(after.statusCode, 401);
    assert.equal(after.json().error_description, REVOKED);
    // A token outside the chain, of the same user, is untouched.
    assert.equal((await t.api('GET', '/user', { token: unrelated.json().token })).statusCode, 200);
    const shown = await t.api('GET', `/personal_access_tokens/${second.json().id}`);
    assert.equal(shown.json().revoked, true);
  });
});
