import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import { cookiesOf, form, formFields, registerApp, sessionCookie, tokenInfo, type TestClient } from '../helpers/oauth.js';
import { appWithUsers } from '../helpers/suite.js';

const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

describe('OAuth device authorization grant (RFC 8628)', () => {
  let t: TestApp;
  let bob: TestUser;
  let cookie: string;
  let client: TestClient;

  const authorizeDevice = (values: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/authorize_device',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form(values),
    });
  const poll = (deviceCode: string, c: TestClient = client) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ grant_type: DEVICE, device_code: deviceCode, client_id: c.clientId }),
    });
  /** Opens the device page as bob and submits a code; returns the response and the cookies in play. */
  const enterCode = async (userCode: string, userCookie = cookie) => {
    const page = await t.app.inject({ method: 'GET', url: '/oauth/device', headers: { cookie: userCookie } });
    const jar = [userCookie, ...cookiesOf(page)].join('; ');
    const csrf = formFields(page.body).authenticity_token as string;
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/device',
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ authenticity_token: csrf, user_code: userCode }),
    });
    return { res, jar, csrf };
  };
  const decide = async (userCode: string, decision: 'approve' | 'deny') => {
    const { res, jar, csrf } = await enterCode(userCode);
    assert.equal(res.statusCode, 200, res.body.slice(0, 400));
    return t.app.inject({
      method: 'POST',
      url: '/oauth/device/confirm',
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ authenticity_token: csrf, user_code: userCode, decision }),
    });
  };

  before(async () => {
    ({ t, bob } = await appWithUsers(['bob'], { env: { RATE_LIMITS: 'user_code=5/m' } }));
    cookie = await sessionCookie(t, bob);
    client = await registerApp(t, { confidential: false, scopes: 'api read_api read_user' });
  });
  after(() => t.close());

  it('POST /oauth/authorize_device answers the six fields of SPEC', async () => {
    const res = await authorizeDevice({ client_id: client.clientId, scope: 'read_api' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'device_code',
      'expires_in',
      'interval',
      'user_code',
      'verification_uri',
      'verification_uri_complete',
    ]);
    assert.equal(body.expires_in, 300);
    assert.equal(body.interval, 5);
    assert.equal(body.verification_uri, 'http://basalt.test/oauth/device');
    assert.equal(body.verification_uri_complete, `http://basalt.test/oauth/device?user_code=${encodeURIComponent(body.user_code)}`);
    assert.match(body.user_code.replace('-', ''), /^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    assert.ok(Buffer.from(body.device_code, 'base64url').length >= 16, 'device_code carries at least 128 bits');
  });

  it('unknown client is invalid_client; a scope outside the application is invalid_scope', async () => {
    const unknown = await authorizeDevice({ client_id: 'nope' });
    assert.equal(unknown.statusCode, 401);
    assert.equal(unknown.json().error, 'invalid_client');
    const scope = await authorizeDevice({ client_id: client.clientId, scope: 'sudo' });
    assert.equal(scope.statusCode, 400);
    assert.equal(scope.json().error, 'invalid_scope');
  });

  it('pending, slow_down (+5 s each time), pending at the new interval, then the token with Bearer and scope', async () => {
    const { device_code, user_code } = (await authorizeDevice({ client_id: client.clientId, scope: 'read_api' })).json();
    const first = await poll(device_code);
    assert.equal(first.statusCode, 400);
    assert.equal(first.json().error, 'authorization_pending');
    t.manual?.advance(1000);
    assert.equal((await poll(device_code)).json().error, 'slow_down');
    t.manual?.advance(9000); // 9 s since the last poll: below the new 10 s interval
    assert.equal((await poll(device_code)).json().error, 'slow_down');
    t.manual?.advance(15_000); // interval is now 15 s
    assert.equal((await poll(device_code)).json().error, 'authorization_pending');

    const done = await decide(user_code, 'approve');
    assert.equal(done.statusCode, 200);
    assert.match(done.body, /Device connected/);
    t.manual?.advance(15_000);
    const res = await poll(device_code);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'created_at', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'read_api');
    assert.equal(body.expires_in, 7200);
    assert.equal((await tokenInfo(t, body.access_token)).json().resource_owner_id, bob.user.id);

    t.manual?.advance(15_000);
    const again = await poll(device_code);
    assert.equal(again.json().error, 'invalid_grant');
    assert.equal((await tokenInfo(t, body.access_token)).statusCode, 401, 'a second redemption revokes what the first issued');
  });

  it('slow_down state is kept in the database: a second process sees the interval', async () => {
    const other = await createTestApp({ sameDatabaseAs: t });
    try {
      other.manual?.set(t.clock.now());
      const { device_code } = (await authorizeDevice({ client_id: client.clientId })).json();
      assert.equal((await poll(device_code)).json().error, 'authorization_pending');
      const fromOther = await other.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ grant_type: DEVICE, device_code, client_id: client.clientId }),
      });
      assert.equal(fromOther.json().error, 'slow_down');
    } finally {
      await other.close();
    }
  });

  it('a denied request answers access_denied', async () => {
    const { device_code, user_code } = (await authorizeDevice({ client_id: client.clientId })).json();
    const done = await decide(user_code, 'deny');
    assert.match(done.body, /denied/);
    const res = await poll(device_code);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'access_denied');
  });

  it('after expires_in the answer is expired_token', async () => {
    const { device_code } = (await authorizeDevice({ client_id: client.clientId })).json();
    t.manual?.advance(301_000);
    const res = await poll(device_code);
    assert.equal(res.json().error, 'expired_token');
  });

  it('a device code of another client is invalid_grant', async () => {
    const otherClient = await registerApp(t, { confidential: false, scopes: 'api' });
    const { device_code } = (await authorizeDevice({ client_id: client.clientId })).json();
    const res = await poll(device_code, otherClient);
    assert.equal(res.json().error, 'invalid_grant');
  });

  it('the page prefills ?user_code=, needs sign-in, and shows the application and scopes', async () => {
    const anonymous = await t.app.inject({ method: 'GET', url: '/oauth/device?user_code=BCDF-GHJK' });
    assert.equal(anonymous.statusCode, 302);
    assert.equal(anonymous.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent('/oauth/device?user_code=BCDF-GHJK')}`);
    const page = await t.app.inject({ method: 'GET', url: '/oauth/device?user_code=BCDF-GHJK', headers: { cookie } });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /value="BCDF-GHJK"/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    const { user_code } = (await authorizeDevice({ client_id: client.clientId, scope: 'read_api read_user' })).json();
    const { res } = await enterCode(user_code.toLowerCase());
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /Test app/);
    assert.match(res.body, /read_api/);
    assert.match(res.body, /read_user/);
  });

  it('the code form refuses a missing or wrong CSRF token', async () => {
    const { user_code } = (await authorizeDevice({ client_id: client.clientId })).json();
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/device',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ user_code, authenticity_token: 'forged' }),
    });
    // The page layer's answer to a form without its session's token: 422, the form kept, nothing approved.
    assert.equal(res.statusCode, 422);
    assert.match(res.body, /This form has expired/);
  });

  it('wrong codes are rate-limited per user (429 after the user_code limit)', async () => {
    const carol = await createUser(t.app);
    const carolCookie = await sessionCookie(t, carol);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await enterCode('BBBB-BBBB', carolCookie)).res.statusCode);
    assert.deepEqual(statuses, [422, 422, 422, 422, 422, 429]);
    const { user_code } = (await authorizeDevice({ client_id: client.clientId })).json();
    const blocked = await enterCode(user_code, carolCookie);
    assert.equal(blocked.res.statusCode, 429, 'even a right code waits out the window');
    assert.ok(blocked.res.headers['retry-after']);
  });

  it('blocking the user denies a grant they approved but the device has not redeemed yet', async () => {
    t.manual?.advance(61_000); // past the window the previous test filled with wrong codes
    const carol = await createUser(t.app);
    const carolCookie = await sessionCookie(t, carol);
    const started = (await authorizeDevice({ client_id: client.clientId, scope: 'read_api' })).json();
    const { res, jar, csrf } = await enterCode(started.user_code, carolCookie);
    assert.equal(res.statusCode, 200, res.body.slice(0, 400));
    const approved = await t.app.inject({
      method: 'POST',
      url: '/oauth/device/confirm',
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ authenticity_token: csrf, user_code: started.user_code, decision: 'approve' }),
    });
    assert.ok(approved.statusCode < 400, approved.body.slice(0, 400));
    assert.equal((await t.api('POST', `/users/${carol.user.id}/block`)).statusCode, 201);
    t.manual?.advance(6_000);
    const polled = await poll(started.device_code);
    assert.equal(polled.statusCode, 400);
    assert.equal(polled.json().error, 'access_denied');
  });
});
