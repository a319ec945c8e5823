import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { createUser } from '../helpers/factories.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const setCookieOf = (res: { headers: Record<string, unknown> }, name: string): string => {
  const raw = res.headers['set-cookie'];
  const all = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  const found = all.find((c) => c.startsWith(`${name}=`));
  assert.ok(found, `no Set-Cookie for ${name}`);
  return found;
};

describe('session sign-in (/users/sign_in)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('GET renders the form with user[login], user[password], a CSRF token and anti-framing headers', async () => {
    const res = await new TestBrowser(t.app).request('GET', '/users/sign_in');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.body, /name="user\[login\]"/);
    assert.match(res.body, /name="user\[password\]"/);
    assert.ok(TestBrowser.csrfOf(res.body).length > 20);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
  });

  it('signing in sets an HttpOnly SameSite=Lax _service_session stored only as its SHA-256', async () => {
    const browser = new TestBrowser(t.app);
    const res = await browser.signIn('root', 'root-password-123');
    assert.equal(res.statusCode, 303);
    // Without a page to return to, sign-in lands on the dashboard.
    assert.equal(res.headers.location, '/');
    const cookie = setCookieOf(res, '_service_session');
    assert.match(cookie, /HttpOnly/i);
    assert.match(cookie, /SameSite=Lax/i);
    assert.doesNotMatch(cookie, /Secure/i, 'no Secure flag on an http EXTERNAL_URL');
    const value = browser.cookies.get('_service_session') ?? '';
    assert.ok(value.length >= 43);
    const rows = await t.database.handle.db.selectFrom('sessions').selectAll().execute();
    assert.ok(rows.some((r) => r.session_digest === sha256(value)));
    assert.ok(rows.every((r) => r.session_digest !== value && !JSON.stringify(r).includes(value)));
    // The cookie lives as long as the session's absolute lifetime (SESSION_MAX_LIFETIME_DAYS, 30);
    // the server ends it sooner after a week unused (sessions-lifetime.test.ts).
    const expires = /Expires=([^;]+)/i.exec(cookie)?.[1];
    assert.ok(expires);
    const inDays = (Date.parse(expires) - t.clock.now()) / 86_400_000;
    assert.ok(inDays > 29.9 && inDays <= 30.01, `expires in ${inDays} days`);

    const profile = await browser.request('GET', '/profile');
    assert.equal(profile.statusCode, 200);
    assert.match(profile.body, /Signed in as <strong[^>]*>root<\/strong>/);
  });

  it('the username or the email, in any case, signs in', async () => {
    const user = await createUser(t.app, { username: 'Caseuser' });
    const byEmail = await new TestBrowser(t.app).signIn(user.user.email.toUpperCase(), 'password-123');
    assert.equal(byEmail.statusCode, 303);
    const byName = await new TestBrowser(t.app).signIn('caseUSER', 'password-123');
    assert.equal(byName.statusCode, 303);
  });

  it('the session cookie authenticates GET requests on the API', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    const res = await browser.request('GET', '/api/v4/user');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().username, 'root');
  });

  it('unsafe API methods with a cookie need X-CSRF-Token; without it the cookie does not count (401)', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    const without = await browser.request('POST', '/api/v4/projects', { json: { name: 'csrf-less' } });
    assert.equal(without.statusCode, 401);
    assert.deepEqual(without.json(), { message: '401 Unauthorized' });
    const wrong = await browser.request('POST', '/api/v4/projects', { json: { name: 'csrf-wrong' }, headers: { 'x-csrf-token': 'nope' } });
    assert.equal(wrong.statusCode, 401);
    const token = await browser.csrf();
    const ok = await browser.request('POST', '/api/v4/projects', { json: { name: 'csrf-ok' }, headers: { 'x-csrf-token': token } });
    assert.equal(ok.statusCode, 201);
    assert.equal(ok.json().name, 'csrf-ok');
  });

  it('every sign-in gets a new session id; the one the browser brought is destroyed (fixation)', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    const first = browser.cookies.get('_service_session') ?? '';
    await browser.signIn('root', 'root-password-123');
    const second = browser.cookies.get('_service_session') ?? '';
    assert.notEqual(first, second);
    const stale = await t.app.inject({ method: 'GET', url: '/api/v4/user', headers: { cookie: `_service_session=${first}` } });
    assert.equal(stale.statusCode, 401);
    const fresh = await t.app.inject({ method: 'GET', url: '/api/v4/user', headers: { cookie: `_service_session=${second}` } });
    assert.equal(fresh.statusCode, 200);
  });

  it('a planted session id is never adopted', async () => {
    const planted = 'A'.repeat(43);
    const browser = new TestBrowser(t.app);
    browser.cookies.set('_service_session', planted);
    await browser.signIn('root', 'root-password-123');
    assert.notEqual(browser.cookies.get('_service_session'), planted);
    const res = await t.app.inject({ method: 'GET', url: '/api/v4/user', headers: { cookie: `_service_session=${planted}` } });
    assert.equal(res.statusCode, 401);
  });

  it('redirect_to: same-site paths are followed, anything else is ignored', async () => {
    const follow = await new TestBrowser(t.app).signIn('root', 'root-password-123', '/oauth/authorize?client_id=x&state=y');
    assert.equal(follow.headers.location, '/oauth/authorize?client_id=x&state=y');
    for (const evil of [
      'https://evil.example/',
      '//evil.example/x',
      '/\\evil.example',
      '\\\\evil.example',
      'javascript:alert(1)',
      '/ok\r\nSet-Cookie: x=y',
      'evil',
      '',
    ]) {
      const res = await new TestBrowser(t.app).signIn('root', 'root-password-123', evil);
      assert.equal(res.statusCode, 303, evil);
      assert.equal(res.headers.location, '/', `ignored: ${JSON.stringify(evil)}`);
    }
  });

  it('redirect_to in the query of the page is carried by the form', async () => {
    const browser = new TestBrowser(t.app);
    const page = await browser.request('GET', '/users/sign_in?redirect_to=%2Fuser_settings%2Fapplications');
    assert.match(page.body, /name="redirect_to" value="\/user_settings\/applications"/);
    const evil = await browser.request('GET', '/users/sign_in?redirect_to=https%3A%2F%2Fevil.example');
    assert.doesNotMatch(evil.body, /evil\.example/);
  });

  it('pages of other modules send signed-out people to the sign-in page and get them back', async () => {
    const browser = new TestBrowser(t.app);
    const res = await browser.request('GET', '/profile');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/users/sign_in?redirect_to=%2Fprofile');
    const back = await browser.signIn('root', 'root-password-123', '/profile');
    assert.equal(back.headers.location, '/profile');
    const again = await browser.request('GET', '/users/sign_in?redirect_to=%2Fprofile');
    assert.equal(again.statusCode, 302, 'a signed-in visit to the sign-in page moves on');
    assert.equal(again.headers.location, '/profile');
  });

  it('a wrong password re-renders the form with an error and no session', async () => {
    const browser = new TestBrowser(t.app);
    const res = await browser.signIn('root', 'wrong-password');
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /Invalid login or password\./);
    assert.equal(browser.cookies.has('_service_session'), false);
    const unknown = await browser.signIn('nobody-here', 'whatever-123');
    assert.equal(unknown.statusCode, 401);
    assert.match(unknown.body, /Invalid login or password\./);
  });

  it('a POST without the page CSRF token is refused (422) and signs nobody in', async () => {
    const browser = new TestBrowser(t.app);
    const res = await browser.request('POST', '/users/sign_in', {
      form: { 'user[login]': 'root', 'user[password]': 'root-password-123' },
    });
    assert.equal(res.statusCode, 422);
    assert.equal(browser.cookies.has('_service_session'), false);
  });

  it('blocked users cannot sign in, and a blocked user’s session stops working', async () => {
    const user = await createUser(t.app);
    const browser = new TestBrowser(t.app);
    assert.equal((await browser.signIn(user.user.username, 'password-123')).statusCode, 303);
    assert.equal((await t.api('POST', `/users/${user.user.id}/block`)).statusCode, 201);
    const api = await browser.request('GET', '/api/v4/user');
    assert.equal(api.statusCode, 403);
    assert.deepEqual(api.json(), { message: '403 Forbidden - Your account has been blocked.' });
    const page = await browser.request('GET', '/profile');
    assert.equal(page.statusCode, 302, 'pages treat a blocked user as signed out');
    const res = await new TestBrowser(t.app).signIn(user.user.username, 'password-123');
    assert.equal(res.statusCode, 403);
    assert.match(res.body, /blocked/);
  });

  it('signing out needs the CSRF token, then ends the session and clears the cookie', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    const session = browser.cookies.get('_service_session') ?? '';
    const forged = await browser.request('POST', '/users/sign_out', { form: {} });
    assert.equal(forged.statusCode, 422);
    assert.equal((await browser.request('GET', '/api/v4/user')).statusCode, 200);

    const res = await browser.request('POST', '/users/sign_out', { form: { authenticity_token: await browser.csrf() } });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/users/sign_in');
    assert.equal(browser.cookies.has('_service_session'), false);
    const rows = await t.database.handle.db.selectFrom('sessions').where('session_digest', '=', sha256(session)).selectAll().execute();
    assert.equal(rows.length, 0);
    const replay = await t.app.inject({ method: 'GET', url: '/api/v4/user', headers: { cookie: `_service_session=${session}` } });
    assert.equal(replay.statusCode, 401);
  });

  it('a session ends after a week', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    assert.equal((await browser.request('GET', '/api/v4/user')).statusCode, 200);
    t.manual?.advance(7 * 86_400_000 + 1000);
    assert.equal((await browser.request('GET', '/api/v4/user')).statusCode, 401);
  });

  it('Sudo with a session is refused: it needs an OAuth or personal token', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    const res = await browser.request('GET', '/api/v4/user', { headers: { sudo: 'root' } });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden - Must be authenticated using an OAuth or personal access token to use sudo' });
  });

  it('the session resolver does not run for requests that carry a token', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn('root', 'root-password-123');
    const original = t.app.platform.resolvers.current.session;
    assert.ok(original);
    let calls = 0;
    t.app.platform.resolvers.register({
      session: (request) => {
        calls += 1;
        return original(request);
      },
    });
    try {
      const withToken = await browser.request('GET', '/api/v4/user', { headers: { 'private-token': ROOT_TOKEN } });
      assert.equal(withToken.statusCode, 200);
      assert.equal(calls, 0);
      await browser.request('GET', '/api/v4/user');
      assert.equal(calls, 1);
    } finally {
      t.app.platform.resolvers.register({ session: original });
    }
  });
});

describe('session cookie on an https EXTERNAL_URL', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { EXTERNAL_URL: 'https://basalt.test' } });
  });
  after(() => t.close());

  it('carries the Secure flag', async () => {
    const res = await new TestBrowser(t.app).signIn('root', 'root-password-123');
    assert.equal(res.statusCode, 303);
    assert.match(setCookieOf(res, '_service_session'), /;\s*Secure/i);
  });
});

describe('failed sign-in throttling (sign_in limit)', () => {
  let t: TestApp;
  before(async () => {
    // A manual clock: a real minute boundary between attempts would reset the window.
    t = await createTestApp({ env: { RATE_LIMITS: 'sign_in=3/m' } });
  });
  after(() => t.close());

  it('counts failures per login: after the limit even the right password is refused with 429 and Retry-After', async () => {
    const user = await createUser(t.app);
    for (let i = 0; i < 3; i += 1) {
      const res = await new TestBrowser(t.app, `10.1.0.${i + 1}`).signIn(user.user.username, 'wrong-password');
      assert.equal(res.statusCode, 401);
    }
    const res = await new TestBrowser(t.app, '10.1.0.9').signIn(user.user.username, 'password-123');
    assert.equal(res.statusCode, 429);
    const retry = Number(res.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    assert.equal(res.headers['ratelimit-name'], 'throttle_sign_in');
    assert.match(res.body, /Too many failed sign-in attempts/);
    assert.equal(
      res.cookies.some((c) => c.name === '_service_session'),
      false,
    );
  });

  it('counts failures per IP across logins', async () => {
    const victim = await createUser(t.app);
    for (let i = 0; i < 3; i += 1) {
      const res = await new TestBrowser(t.app, '10.2.0.1').signIn(`nobody${i}`, 'wrong-password');
      assert.equal(res.statusCode, 401);
    }
    const blocked = await new TestBrowser(t.app, '10.2.0.1').signIn(victim.user.username, 'password-123');
    assert.equal(blocked.statusCode, 429);
    const elsewhere = await new TestBrowser(t.app, '10.2.0.2').signIn(victim.user.username, 'password-123');
    assert.equal(elsewhere.statusCode, 303, 'another address is not affected');
  });

  it('successful sign-ins do not count', async () => {
    const user = await createUser(t.app);
    for (let i = 0; i < 5; i += 1) {
      const res = await new TestBrowser(t.app, '10.3.0.1').signIn(user.user.username, 'password-123');
      assert.equal(res.statusCode, 303);
    }
  });
});
