// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import { authorizeQuery, pkcePair, registerApp, tokenRequest, type TestClient } from '../helpers/oauth.js';

const TOKENS = '/-/user_settings/personal_access_tokens';
const APPLICATIONS = '/-/user_settings/applications';

/** The `<input id>`'s value on a page. */
const inputValue = (html: string, id: string) => new RegExp(`id="${id}"[^>]*value="([^"]*)"|value="([^"]*)"[^>]*id="${id}"`).exec(html);
const createdToken = (html: string): string => {
  const match = inputValue(html, 'created-personal-access-token');
  const token = match?.[1] ?? match?.[2];
  if (!token) throw new Error('no token on the page');
  return token;
};
/** The form field's message beside it (`<span class="field-error" id="field-<name>-error">`). */
const fieldError = (html: string, id: string) => new RegExp(`id="${id}-error">([^<]*)<`).exec(html)?.[1];

describe('account self-service pages', () => {
  let t: TestApp;
  let alice: TestUser;
  let browser: TestBrowser;
  let csrf: string;

  before(async () => {
    t = await createTestApp();
    alice = await createUser(t.app);
    browser = new TestBrowser(t.app);
    assert.equal((await browser.signIn(alice.user.username, 'password-123')).statusCode, 303);
    csrf = await browser.csrf();
  });
  after(() => t.close());

  it('every settings page needs signing in and answers with its form and the settings tabs', async () => {
    const pages = [TOKENS, '/-/user_settings/password/edit', APPLICATIONS, '/user_settings/applications', '/-/user_settings/profile'];
    const anonymous = new TestBrowser(t.app);
    for (const url of pages) {
      const visitor = await anonymous.request('GET', url);
      assert.equal(visitor.statusCode, 302, url);
      assert.equal(visitor.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(url)}`);
      const page = await browser.request('GET', url);
      assert.equal(page.statusCode, 200, url);
      assert.match(page.body, /<nav class="tabs" aria-label="User settings">/, url);
      assert.match(page.body, /<form method="post"/, url);
    }
  });

  describe('personal access tokens', () => {
    it('creates a token shown once that works on the API; revoked, it gets 401', async () => {
      const page = await browser.request('GET', TOKENS);
      assert.match(page.body, /No active personal access tokens|Active personal access tokens/);
      const suggested = inputValue(page.body, 'field-expires_at');
      assert.match(suggested?.[1] ?? suggested?.[2] ?? '', /^\d{4}-\d{2}-\d{2}$/, 'a default expiry is offered');
      const created = await browser.request('POST', TOKENS, {
        form: { authenticity_token: csrf, name: 'laptop', expires_at: '', scopes: 'read_user' },
      });
      assert.equal(created.statusCode, 201);
      const token = createdToken(created.body);
      assert.match(token, /^bsp_/);
      assert.ok(!(created.headers['set-cookie'] ?? '').toString().includes(token), 'the secret is not in a cookie');
      assert.equal(created.headers.location, undefined);

      const me = await t.api('GET', '/user', { token });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().username, alice.user.username);
      assert.equal((await t.api('POST', '/projects', { token, body: { name: 'nope' } })).statusCode, 403, 'read_user cannot write');

      const listing = await browser.request('GET', TOKENS);
      assert.ok(!listing.body.includes(token), 'the secret is shown once');
      const row = await t.database.handle.db
        .selectFrom('personal_access_tokens')
        .selectAll()
        .where('user_id', '=', alice.user.id)
        .where('name', '=', 'laptop')
        .executeTakeFirstOrThrow();
      assert.match(listing.body, new RegExp(`data-token-id="${row.id}"`));
      const revoked = await browser.request('POST', `${TOKENS}/${row.id}/revoke`, { form: { authenticity_token: csrf } });
      assert.equal(revoked.statusCode, 303);
      assert.equal(revoked.headers.location, TOKENS);
      const after = await browser.request('GET', TOKENS);
      assert.match(after.body, /Token laptop was revoked/);
      assert.doesNotMatch(after.body, new RegExp(`data-token-id="${row.id}"`));
      assert.equal((await t.api('GET', '/user', { token })).statusCode, 401);
    });

    it('refused input keeps what was typed and names the field: 400', async () => {
      const tooLate = await browser.request('POST', TOKENS, {
        form: { authenticity_token: csrf, name: 'far', expires_at: '2999-01-01', scopes: 'api' },
      });
      assert.equal(tooLate.statusCode, 400);
      assert.match(fieldError(tooLate.body, 'field-expires_at') ?? '', /must be before \d{4}-\d{2}-\d{2}/);
      assert.match(tooLate.body, /id="field-name"[^>]*value="far"|value="far"[^>]*id="field-name"/);
      assert.match(tooLate.body, /id="scope_api"[^>]*checked|checked[^>]*id="scope_api"/);

      const noScope = await browser.request('POST', TOKENS, { form: { authenticity_token: csrf, name: 'x', expires_at: '' } });
      assert.equal(noScope.statusCode, 400);
      assert.match(fieldError(noScope.body, 'scopes') ?? '', /can't be blank/);

      const adminScope = await browser.request('POST', TOKENS, { form: { authenticity_token: csrf, name: 'x', scopes: 'sudo' } });
      assert.equal(adminScope.statusCode, 400, 'sudo needs an administrator');
      assert.ok(!(await browser.request('GET', TOKENS)).body.includes('id="scope_sudo"'), 'and is not offered');

      const noName = await browser.request('POST', TOKENS, { form: { authenticity_token: csrf, scopes: 'api' } });
      assert.equal(noName.statusCode, 400);
      assert.match(fieldError(noName.body, 'field-name') ?? '', /is required/);

      const expired = await browser.request('POST', TOKENS, { form: { authenticity_token: 'A'.repeat(43), name: 'kept', scopes: 'api' } });
      assert.equal(expired.statusCode, 422);
      assert.match(expired.body, /value="kept"/);
    });

    it('rotate shows the new token once; the old one stops working', async () => {
      const made = await t.app.modules.identity.tokens.create(
        alice.user.id,
        'personal',
        { name: 'ci', scopes: ['api'] },
        { createdById: alice.user.id },
      );
      const rotated = await browser.request('POST', `${TOKENS}/${made.row.id}/rotate`, { form: { authenticity_token: csrf } });
      assert.equal(rotated.statusCode, 200);
      const fresh = createdToken(rotated.body);
      assert.notEqual(fresh, made.token);
      assert.match(rotated.body, /Token ci was rotated/);
      assert.equal((await t.api('GET', '/user', { token: made.token })).statusCode, 401);
      assert.equal((await t.api('GET', '/user', { token: fresh })).statusCode, 200);
    });

    it("another user's token, or a project token, is not found", async () => {
      const bob = await createUser(t.app);
      const bobs = await t.database.handle.db
        .selectFrom('personal_access_tokens')
        .select('id')
        .where('user_id', '=', bob.user.id)
        .executeTakeFirstOrThrow();
      for (const action of ['revoke', 'rotate']) {
        const res = await browser.request('POST', `${TOKENS}/${bobs.id}/${action}`, { form: { authenticity_token: csrf } });
        assert.equal(res.statusCode, 404, action);
        assert.match(String(res.headers['content-type']), /^text\/html/);
      }
      assert.equal((await t.api('GET', '/user', { token: bob.token })).statusCode, 200);
    });
  });

  describe('password', () => {
    it('needs the current password and a matching confirmation; other sessions end, this one stays', async () => {
      const carol = await createUser(t.app);
      const here = new TestBrowser(t.app);
      await here.signIn(carol.user.username, 'password-123');
      const elsewhere = new TestBrowser(t.app, '10.0.0.2');
      await elsewhere.signIn(carol.user.username, 'password-123');
      assert.equal((await elsewhere.request('GET', '/profile')).statusCode, 200);
      const token = await here.csrf();
      const post = (form: Record<string, string>) =>
        here.request('POST', '/-/user_settings/password', { form: { authenticity_token: token, ...form } });

      const wrong = await post({ current_password: 'nope-nope', password: 'new-password-456', password_confirmation: 'new-password-456' });
      assert.equal(wrong.statusCode, 400);
      assert.match(fieldError(wrong.body, 'field-current_password') ?? '', /is not correct/);
      assert.ok(!wrong.body.includes('new-password-456'), 'passwords are never drawn back');
      const mismatch = await post({ current_password: 'password-123', password: 'new-password-456', password_confirmation: 'other-789' });
      assert.equal(mismatch.statusCode, 400);
      assert.match(fieldError(mismatch.body, 'field-password_confirmation') ?? '', /doesn't match/);
      const short = await post({ current_password: 'password-123', password: 'short', password_confirmation: 'short' });
      assert.equal(short.statusCode, 400);
      assert.match(fieldError(short.body, 'field-password') ?? '', /too short/);
      assert.equal((await elsewhere.request('GET', '/profile')).statusCode, 200, 'refusals change nothing');

      const changed = await post({
        current_password: 'password-123',
        password: 'new-password-456',
        password_confirmation: 'new-password-456',
      });
      assert.equal(changed.statusCode, 303);
      const notice = await here.request('GET', String(changed.headers.location));
      assert.equal(notice.statusCode, 200, 'this browser stays signed in');
      assert.match(notice.body, /Every other session of your account was signed out/);
      const ended = await elsewhere.request('GET', '/profile');
      assert.equal(ended.statusCode, 302, 'the other session ended');
      assert.match(String(ended.headers.location), /^\/users\/sign_in/);
      assert.equal((await new TestBrowser(t.app).signIn(carol.user.username, 'password-123')).statusCode, 401);
      assert.equal((await new TestBrowser(t.app).signIn(carol.user.username, 'new-password-456')).statusCode, 303);
    });
  });

  describe('profile', () => {
    it('updates name, email, bio and private profile; a taken email or a long bio is named beside its field', async () => {
      const dave = await createUser(t.app);
      const page = await browser.request('GET', '/-/user_settings/profile');
      assert.match(page.body, new RegExp(`id="signed-in-username">${alice.user.username}<`));
      const post = (form: Record<string, string>) =>
        browser.request('POST', '/-/user_settings/profile', { form: { authenticity_token: csrf, ...form } });

      const taken = await post({ name: 'Alice A.', email: dave.user.email, bio: 'hi' });
      assert.equal(taken.statusCode, 400);
      assert.match(fieldError(taken.body, 'field-email') ?? '', /has already been taken/);
      assert.match(taken.body, /value="Alice A\."/, 'the typed name is kept');
      const long = await post({ name: 'Alice', email: alice.user.email, bio: 'x'.repeat(256) });
      assert.equal(long.statusCode, 400);
      assert.match(fieldError(long.body, 'field-bio') ?? '', /too long/);
      const bad = await post({ name: 'Alice', email: 'not-an-email', bio: '' });
      assert.match(fieldError(bad.body, 'field-email') ?? '', /is invalid/);

      const saved = await post({
        name: 'Alice Liddell',
        email: 'alice.liddell@example.com',
        bio: 'Down the rabbit hole',
        private_profile: '1',
      });
      assert.equal(saved.statusCode, 303);
      const again = await browser.request('GET', '/-/user_settings/profile');
      assert.match(again.body, /Profile was updated/);
      const api = (await t.api('GET', '/user', { token: alice.token })).json();
      assert.equal(api.name, 'Alice Liddell');
      assert.equal(api.email, 'alice.liddell@example.com');
      assert.equal(api.bio, 'Down the rabbit hole');
      assert.equal(api.private_profile, true);
      await post({ name: 'Alice Liddell', email: 'alice.liddell@example.com', bio: '' });
      assert.equal((await t.api('GET', '/user', { token: alice.token })).json().private_profile, false, 'unchecked is false');
    });

    it('/profile still names who is signed in and links the settings pages', async () => {
      const page = await browser.request('GET', '/profile');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /id="signed-in-username"/);
      assert.match(page.body, /href="\/-\/user_settings\/personal_access_tokens"/);
    });
  });

  describe('applications and authorized applications', () => {
    let client: TestClient;
    before(async () => {
      client = await registerApp(t, { confidential: true, scopes: 'api read_user', name: 'Remembered app' });
    });

    /** GET /oauth/authorize; approves on the consent page if one is shown. Returns the code and whether consent was asked. */
    async function authorize(
      scope: string,
      extra: Record<string, string> = {},
    ): Promise<{ asked: boolean; code: string; verifier: string }> {
      const { verifier, challenge } = pkcePair();
      const url = `/oauth/authorize?${authorizeQuery(client, { scope, code_challenge: challenge, code_challenge_method: 'S256', ...extra })}`;
      let res = await browser.request('GET', url);
      const asked = res.statusCode === 200;
      if (asked) {
        const fields: Record<string, string> = {};
        for (const m of res.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
          fields[m[1] as string] = (m[2] as string).replace(/&amp;/g, '&');
        res = await browser.request('POST', '/oauth/authorize', { form: { ...fields, decision: 'approve' } });
        assert.equal(res.statusCode, 303);
      } else assert.equal(res.statusCode, 302, res.body.slice(0, 200));
      const code = new URL(String(res.headers.location)).searchParams.get('code');
      assert.ok(code, String(res.headers.location));
      return { asked, code, verifier };
    }
    async function exchange(code: string, verifier: string): Promise<string> {
      const res = await tokenRequest(t, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        client_secret: client.secret,
        code_verifier: verifier,
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().access_token as string;
    }

    it('consent is remembered for the same scopes or fewer, asked again for more, for prompt=consent, and after Revoke', async () => {
      const first = await authorize('read_user');
      assert.equal(first.asked, true);
      const token = await exchange(first.code, first.verifier);
      const bearer = { authorization: `Bearer ${token}` };
      assert.equal((await t.api('GET', '/user', { token: null, headers: bearer })).statusCode, 200);

      const again = await authorize('read_user');
      assert.equal(again.asked, false, 'the same scopes: no consent page');
      await exchange(again.code, again.verifier);
      assert.equal((await authorize('api read_user')).asked, true, 'more scopes: asked');
      const narrower = await authorize('read_user');
      assert.equal(narrower.asked, false);
      assert.equal((await authorize('read_user', { prompt: 'consent' })).asked, true, 'prompt=consent always asks');
      const silent = await browser.request('GET', `/oauth/authorize?${authorizeQuery(client, { scope: 'read_user', prompt: 'none' })}`);
      assert.equal(silent.statusCode, 302);
      assert.ok(new URL(String(silent.headers.location)).searchParams.get('code'), 'prompt=none with a remembered consent');

      const page = await browser.request('GET', APPLICATIONS);
      assert.match(page.body, new RegExp(`data-authorized-application-id="${client.clientId}"`));
      assert.match(page.body, /Remembered app/);
      const unexchanged = narrower;
      const revoked = await browser.request('POST', `${APPLICATIONS}/authorized/${client.id}/revoke`, {
        form: { authenticity_token: csrf },
      });
      assert.equal(revoked.statusCode, 303);
      const listing = await browser.request('GET', APPLICATIONS);
      assert.match(listing.body, /Access of Remembered app to your account was revoked/);
      assert.doesNotMatch(listing.body, new RegExp(`data-authorized-application-id="${client.clientId}"`));
      assert.equal((await t.api('GET', '/user', { token: null, headers: bearer })).statusCode, 401, 'its tokens stop working');
      const late = await tokenRequest(t, {
        grant_type: 'authorization_code',
        code: unexchanged.code,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        client_secret: client.secret,
        code_verifier: unexchanged.verifier,
      });
      assert.equal(late.statusCode, 400, 'a code issued before the revocation is used up');
      assert.equal((await authorize('read_user')).asked, true, 'consent is asked again');
      const none = await browser.request('GET', `/oauth/authorize?${authorizeQuery(client, { scope: 'api', prompt: 'none' })}`);
      assert.equal(new URL(String(none.headers.location)).searchParams.get('error'), 'consent_required');
    });

    it('a public client is asked every time', async () => {
      const pub = await registerApp(t, { confidential: false, scopes: 'read_user', name: 'Public app' });
      const ask = async () => {
        const { challenge } = pkcePair();
        const res = await browser.request(
          'GET',
          `/oauth/authorize?${authorizeQuery(pub, { scope: 'read_user', code_challenge: challenge, code_challenge_method: 'S256' })}`,
        );
        return res.statusCode;
      };
      await t.database.handle.db
        .insertInto('oauth_access_tokens')
        .values({
          application_id: pub.id,
          user_id: alice.user.id,
          token_digest: 'x'.repeat(64),
          refresh_digest: 'y'.repeat(64),
          scopes: 'read_user',
          family: 'public-family',
          previous_id: null,
          redirect_uri: pub.redirectUri,
          expires_at: Date.now() + 3_600_000,
          created_at: Date.now(),
        })
        .execute();
      assert.equal(await ask(), 200);
    });

    it('own applications: create shows the secret once, Edit with field errors, renew, delete', async () => {
      const page = await browser.request('GET', APPLICATIONS);
      assert.match(page.body, /Add new application/);
      const created = await browser.request('POST', APPLICATIONS, {
        form: { authenticity_token: csrf, name: 'Mine', redirect_uri: 'https://mine.example/cb', confidential: '1', scopes: 'read_user' },
      });
      assert.equal(created.statusCode, 200);
      assert.match(created.body, /id="application-secret">bss_/);
      const row = await t.database.handle.db
        .selectFrom('oauth_applications')
        .selectAll()
        .where('owner_id', '=', alice.user.id)
        .where('name', '=', 'Mine')
        .executeTakeFirstOrThrow();

      const edit = await browser.request('GET', `${APPLICATIONS}/${row.id}/edit`);
      assert.equal(edit.statusCode, 200);
      assert.match(edit.body, /value="Mine"/);
      const refused = await browser.request('POST', `${APPLICATIONS}/${row.id}`, {
        form: { authenticity_token: csrf, name: 'Mine 2', redirect_uri: 'https://x.example/cb#frag', scopes: 'read_user' },
      });
      assert.equal(refused.statusCode, 400);
      assert.match(fieldError(refused.body, 'application_redirect_uri') ?? '', /fragment/);
      assert.match(refused.body, /value="Mine 2"/);
      const ok = await browser.request('POST', `${APPLICATIONS}/${row.id}`, {
        form: {
          authenticity_token: csrf,
          name: 'Mine 2',
          redirect_uri: 'https://mine.example/cb\nhttps://mine.example/cb2',
          scopes: 'api',
        },
      });
      assert.equal(ok.statusCode, 303);
      const updated = await t.database.handle.db
        .selectFrom('oauth_applications')
        .selectAll()
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [updated.name, updated.redirect_uri, updated.scopes, updated.confidential],
        ['Mine 2', 'https://mine.example/cb\nhttps://mine.example/cb2', 'api', 0],
      );

      const bob = await createUser(t.app);
      const bobs = new TestBrowser(t.app);
      await bobs.signIn(bob.user.username, 'password-123');
      assert.equal((await bobs.request('GET', `${APPLICATIONS}/${row.id}/edit`)).statusCode, 404, "another user's application");
      const renewed = await browser.request('POST', `${APPLICATIONS}/${row.id}/renew`, { form: { authenticity_token: csrf } });
      assert.match(renewed.body, /id="application-secret">bss_/);
      const deleted = await browser.request('POST', `${APPLICATIONS}/${row.id}/delete`, { form: { authenticity_token: csrf } });
      assert.equal(deleted.statusCode, 303);
      assert.match((await browser.request('GET', APPLICATIONS)).body, /Application Mine 2 was deleted/);
    });
  });
});
