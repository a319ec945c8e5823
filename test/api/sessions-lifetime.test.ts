import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { createUser } from '../helpers/factories.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

async function signedIn(t: TestApp, login: string, password: string): Promise<TestBrowser> {
  const browser = new TestBrowser(t.app);
  const res = await browser.signIn(login, password);
  assert.equal(res.statusCode, 303, res.body);
  return browser;
}

const whoAmI = (browser: TestBrowser) => browser.request('GET', '/api/v4/user');

describe('session lifetimes (SESSION_IDLE_TIMEOUT_MINUTES, SESSION_MAX_LIFETIME_DAYS)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { SESSION_IDLE_TIMEOUT_MINUTES: '60', SESSION_MAX_LIFETIME_DAYS: '1' } });
  });
  after(() => t.close());

  it('a session unused for longer than the idle timeout ends; use keeps it alive', async () => {
    const browser = await signedIn(t, 'root', 'root-password-123');
    for (let i = 0; i < 4; i += 1) {
      t.manual?.advance(45 * MINUTE);
      assert.equal((await whoAmI(browser)).statusCode, 200, `still in use after ${(i + 1) * 45} minutes`);
    }
    t.manual?.advance(61 * MINUTE);
    assert.equal((await whoAmI(browser)).statusCode, 401);
    const page = await browser.request('GET', '/profile');
    assert.equal(page.statusCode, 302);
    assert.match(String(page.headers.location), /^\/users\/sign_in/);
  });

  it('a session ends at its absolute lifetime however active it is', async () => {
    const browser = await signedIn(t, 'root', 'root-password-123');
    for (let elapsed = 0; elapsed < DAY - 30 * MINUTE; elapsed += 30 * MINUTE) {
      t.manual?.advance(30 * MINUTE);
      assert.equal((await whoAmI(browser)).statusCode, 200);
    }
    t.manual?.advance(31 * MINUTE);
    assert.equal((await whoAmI(browser)).statusCode, 401);
  });
});

describe('session lifetimes by default', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('a session used daily outlives a week, ends after 30 days, and one idle for a week ends', async () => {
    const daily = await signedIn(t, 'root', 'root-password-123');
    const idle = await signedIn(t, 'root', 'root-password-123');
    for (let day = 1; day < 30; day += 1) {
      t.manual?.advance(DAY);
      assert.equal((await whoAmI(daily)).statusCode, 200, `day ${day}`);
    }
    assert.equal((await whoAmI(idle)).statusCode, 401, 'the session unused since sign-in ended after a week');
    t.manual?.advance(DAY);
    assert.equal((await whoAmI(daily)).statusCode, 401, '30 days after sign-in');
  });
});

describe('a password change ends the other sessions', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('an administrator setting a password (PUT /users/:id) ends every session of that user', async () => {
    const user = await createUser(t.app);
    const first = await signedIn(t, user.user.username, 'password-123');
    const second = await signedIn(t, user.user.username, 'password-123');
    const bystander = await signedIn(t, 'root', 'root-password-123');
    const res = await t.api('PUT', `/users/${user.user.id}`, { body: { password: 'new-password-456' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await whoAmI(first)).statusCode, 401);
    assert.equal((await whoAmI(second)).statusCode, 401);
    assert.equal((await whoAmI(bystander)).statusCode, 200, "another user's session is untouched");
    assert.equal((await signedIn(t, user.user.username, 'new-password-456')) instanceof TestBrowser, true);
  });

  it('the session that changes its own password survives; the others end', async () => {
    const acting = await signedIn(t, 'root', 'root-password-123');
    const other = await signedIn(t, 'root', 'root-password-123');
    const res = await acting.request('PUT', '/api/v4/users/1', {
      json: { password: 'root-password-456' },
      headers: { 'x-csrf-token': await acting.csrf() },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await whoAmI(acting)).statusCode, 200);
    assert.equal((await whoAmI(other)).statusCode, 401);
  });

  it('a change that sets no password leaves the sessions alone', async () => {
    const user = await createUser(t.app);
    const browser = await signedIn(t, user.user.username, 'password-123');
    const res = await t.api('PUT', `/users/${user.user.id}`, { body: { bio: 'unchanged password' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await whoAmI(browser)).statusCode, 200);
  });
});

describe('CSRF tokens are bound to the session', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it("a token from one session is refused in another, even beside the first session's CSRF cookie", async () => {
    const alice = await createUser(t.app);
    const bob = await createUser(t.app);
    const aliceBrowser = await signedIn(t, alice.user.username, 'password-123');
    const bobBrowser = await signedIn(t, bob.user.username, 'password-123');
    const aliceToken = await aliceBrowser.csrf();
    // The pair an attacker holds from its own session, planted in the victim's browser (cookie tossing).
    const planted = aliceBrowser.cookies.get('_basalt_csrf');
    if (planted) bobBrowser.cookies.set('_basalt_csrf', planted);

    const api = await bobBrowser.request('POST', '/api/v4/projects', { json: { name: 'forged' }, headers: { 'x-csrf-token': aliceToken } });
    assert.equal(api.statusCode, 401);
    const page = await bobBrowser.request('POST', '/-/profile/notifications', {
      form: { authenticity_token: aliceToken, level: 'disabled' },
    });
    assert.equal(page.statusCode, 422);
    const signOut = await bobBrowser.request('POST', '/users/sign_out', { form: { authenticity_token: aliceToken } });
    assert.equal(signOut.statusCode, 422);
    assert.equal((await whoAmI(bobBrowser)).statusCode, 200, 'still signed in');

    const own = await bobBrowser.request('POST', '/api/v4/projects', {
      json: { name: 'own-token' },
      headers: { 'x-csrf-token': await bobBrowser.csrf() },
    });
    assert.equal(own.statusCode, 201, own.body);
  });

  it("the sign-in form's token works before sign-in and ends with it; a new session's token is new", async () => {
    const user = await createUser(t.app);
    const browser = new TestBrowser(t.app);
    const form = await browser.request('GET', '/users/sign_in');
    const preSession = TestBrowser.csrfOf(form.body);
    const res = await browser.request('POST', '/users/sign_in', {
      form: { authenticity_token: preSession, 'user[login]': user.user.username, 'user[password]': 'password-123' },
    });
    assert.equal(res.statusCode, 303);
    const inSession = await browser.csrf();
    assert.notEqual(inSession, preSession);
    const stale = await browser.request('POST', '/users/sign_out', { form: { authenticity_token: preSession } });
    assert.equal(stale.statusCode, 422);

    const again = await signedIn(t, user.user.username, 'password-123');
    assert.notEqual(await again.csrf(), inSession, "each session's token is its own");
  });
});
