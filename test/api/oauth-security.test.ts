// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { constantTimeEqual, digestToken } from '../../src/infra/crypto.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import {
  authorizeQuery,
  basic,
  cookiesOf,
  form,
  formFields,
  issueTokens,
  obtainCode,
  openConsent,
  pkcePair,
  postConsent,
  registerApp,
  sessionCookie,
  tokenInfo,
  tokenRequest,
  type TestClient,
} from '../helpers/oauth.js';
import { appWithUsers } from '../helpers/suite.js';

/** One test (or a few) per item of the security checklist, named after its rule. */
describe('OAuth security checklist', () => {
  let t: TestApp;
  let alice: TestUser;
  let cookie: string;
  let app: TestClient;
  let pub: TestClient;

  const introspect = (client: TestClient, token: string) =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
      payload: form({ token }),
    });
  const apiStatus = async (token: string) =>
    (await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${token}` } })).statusCode;
  const exchange = (client: TestClient, code: string, extra: Record<string, string | undefined> = {}) =>
    tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      client_secret: client.secret,
      ...extra,
    });
  const refresh = (client: TestClient, refreshToken: string, extra: Record<string, string> = {}) =>
    tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.clientId,
      client_secret: client.secret,
      ...extra,
    });
  const authorizeGet = (query: string) => t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}`, headers: { cookie } });

  before(async () => {
    ({ t, alice } = await appWithUsers(['alice']));
    cookie = await sessionCookie(t, alice);
    app = await registerApp(t, { confidential: true, scopes: 'api read_user openid' });
    pub = await registerApp(t, {
      confidential: false,
      scopes: 'api read_user',
      redirectUri: 'https://app.example/cb\nhttp://127.0.0.1/callback',
    });
  });
  after(() => t.close());

  it('B1: a code used twice is refused and its tokens revoked', async () => {
    const { code } = await obtainCode(t, cookie, app);
    const first = await exchange(app, code);
    assert.equal(first.statusCode, 200);
    const { access_token, refresh_token } = first.json();
    const second = await exchange(app, code);
    assert.equal(second.statusCode, 400);
    assert.equal(second.json().error, 'invalid_grant');
    assert.deepEqual((await introspect(app, access_token)).json(), { active: false });
    assert.equal(await apiStatus(access_token), 401);
    assert.equal((await refresh(app, refresh_token)).json().error, 'invalid_grant');
  });

  it('B1: a code older than 60 s is refused', async () => {
    const { code } = await obtainCode(t, cookie, app);
    t.manual?.advance(61_000);
    const res = await exchange(app, code);
    assert.equal(res.json().error, 'invalid_grant');
  });

  it('B1: a code is bound to its client and its redirect_uri', async () => {
    const other = await registerApp(t, { confidential: true });
    const { code } = await obtainCode(t, cookie, app);
    assert.equal((await exchange(other, code)).json().error, 'invalid_grant');
    assert.equal((await exchange(app, code, { redirect_uri: 'https://app.example/cb2' })).json().error, 'invalid_grant');
    assert.equal((await exchange(app, code)).statusCode, 200, 'failed attempts did not use up the code');
  });

  it('B2: PKCE is required for public clients and S256 is the only method', async () => {
    const missing = await authorizeGet(authorizeQuery(pub));
    assert.equal(missing.statusCode, 302);
    assert.equal(new URL(missing.headers.location as string).searchParams.get('error'), 'invalid_request');
    const { challenge } = pkcePair();
    const plain = await authorizeGet(authorizeQuery(pub, { code_challenge: challenge, code_challenge_method: 'plain' }));
    assert.equal(new URL(plain.headers.location as string).searchParams.get('error'), 'invalid_request');
    const noMethod = await authorizeGet(authorizeQuery(pub, { code_challenge: challenge }));
    assert.equal(new URL(noMethod.headers.location as string).searchParams.get('error'), 'invalid_request');
  });

  it('B2: challenges of 42 or 129 characters or with a bad character are refused', async () => {
    for (const bad of ['a'.repeat(42), 'a'.repeat(129), `${'a'.repeat(42)}!`]) {
      const res = await authorizeGet(authorizeQuery(pub, { code_challenge: bad, code_challenge_method: 'S256' }));
      assert.equal(res.statusCode, 302, bad);
      assert.equal(new URL(res.headers.location as string).searchParams.get('error'), 'invalid_request', bad);
    }
  });

  it('B2: a wrong, malformed or downgraded verifier is invalid_grant; the right one passes', async () => {
    const { verifier, challenge } = pkcePair();
    const { code } = await obtainCode(t, cookie, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    const base = { grant_type: 'authorization_code', code, redirect_uri: pub.redirectUri, client_id: pub.clientId };
    assert.equal((await tokenRequest(t, { ...base, code_verifier: pkcePair().verifier })).json().error, 'invalid_grant');
    assert.equal((await tokenRequest(t, { ...base, code_verifier: 'a'.repeat(42) })).json().error, 'invalid_grant');
    assert.equal((await tokenRequest(t, { ...base, code_verifier: 'a'.repeat(129) })).json().error, 'invalid_grant');
    // Printable ASCII only: a space, a control character or a non-ASCII one is malformed.
    for (const bad of [`${'a'.repeat(42)} `, `${'a'.repeat(42)}\t`, `${'a'.repeat(42)}\u00e9`, `${'a'.repeat(42)}\u007f`]) {
      const res = await tokenRequest(t, { ...base, code_verifier: bad });
      assert.equal(res.json().error, 'invalid_grant', JSON.stringify(bad));
      assert.equal(res.json().error_description, 'code_verifier is malformed.', JSON.stringify(bad));
    }
    const missing = await tokenRequest(t, base);
    assert.equal(missing.json().error, 'invalid_request');
    assert.equal((await tokenRequest(t, { ...base, code_verifier: verifier })).statusCode, 200);
    const withoutChallenge = await obtainCode(t, cookie, app);
    const downgrade = await exchange(app, withoutChallenge.code, { code_verifier: verifier });
    assert.equal(downgrade.json().error, 'invalid_grant');
  });

  it('B2: a verifier of padded standard base64, as git-credential-oauth 0.4.2–0.9.x sends it, passes', async () => {
    // 32 random bytes in standard base64: 44 characters, here starting `++//`, ending in `=`.
    const padded = () => Buffer.concat([Buffer.from([0xfb, 0xef, 0xff]), randomBytes(29)]).toString('base64');
    const verifier = padded();
    assert.match(verifier, /^\+\+\/\/[A-Za-z0-9+/]{39}=$/);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const { code } = await obtainCode(t, cookie, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    const base = { grant_type: 'authorization_code', code, redirect_uri: pub.redirectUri, client_id: pub.clientId };
    // A wrong verifier of the same form is still refused, and does not use up the code.
    const wrong = await tokenRequest(t, { ...base, code_verifier: padded() });
    assert.equal(wrong.json().error, 'invalid_grant');
    const res = await tokenRequest(t, { ...base, code_verifier: verifier });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await apiStatus(res.json().access_token), 200);
  });

  it('a public client may send Basic with an empty secret (Go oauth2, git-credential-oauth); a confidential one may not', async () => {
    const { verifier, challenge } = pkcePair();
    const { code } = await obtainCode(t, cookie, pub, { code_challenge: challenge, code_challenge_method: 'S256' });
    const grant = { grant_type: 'authorization_code', code, redirect_uri: pub.redirectUri, code_verifier: verifier };
    const res = await tokenRequest(t, grant, { authorization: basic(pub, '') });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await apiStatus(res.json().access_token), 200);
    const confidential = await obtainCode(t, cookie, app);
    const refused = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code: confidential.code, redirect_uri: app.redirectUri },
      { authorization: basic(app, '') },
    );
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().error, 'invalid_client');
  });

  it('B3: redirect_uri must equal a registered URI exactly', async () => {
    const variants = [
      'https://app.example/cb/',
      'https://app.example/cb/extra',
      'https://app.example/cb?x=1',
      'https://app.example/CB',
      'http://app.example/cb',
      'https://app.example:8443/cb',
      'https://evil.app.example/cb',
      'https://app.example/cb/../evil',
      'https://app.example/cb#frag',
      'https://app.example/%63b',
    ];
    for (const uri of variants) {
      const res = await authorizeGet(authorizeQuery(app, { redirect_uri: uri }));
      assert.equal(res.statusCode, 400, uri);
      assert.equal(res.headers.location, undefined, uri);
    }
  });

  it('B3: a loopback redirect URI may use any port (RFC 8252 §7.3), nothing else may', async () => {
    const { challenge } = pkcePair();
    const ok = await authorizeGet(
      authorizeQuery(pub, { redirect_uri: 'http://127.0.0.1:53111/callback', code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    assert.equal(ok.statusCode, 200);
    const wrongPath = await authorizeGet(authorizeQuery(pub, { redirect_uri: 'http://127.0.0.1:53111/other' }));
    assert.equal(wrongPath.statusCode, 400);
    const localhost = await authorizeGet(authorizeQuery(pub, { redirect_uri: 'http://localhost:53111/callback' }));
    assert.equal(localhost.statusCode, 400);
  });

  it('B4: an unknown client or a bad redirect_uri shows an error page and never redirects', async () => {
    const unknown = await authorizeGet(form({ client_id: 'nope', redirect_uri: 'http://evil.example/cb', response_type: 'code' }));
    assert.equal(unknown.statusCode, 400);
    assert.equal(unknown.headers.location, undefined);
    assert.match(unknown.body, /invalid_client/);
    const badUri = await authorizeGet(authorizeQuery(app, { redirect_uri: 'http://evil.example/cb' }));
    assert.equal(badUri.statusCode, 400);
    assert.equal(badUri.headers.location, undefined);
    assert.match(badUri.body, /invalid_redirect_uri/);
    assert.doesNotMatch(badUri.body, /evil\.example/);
    const noClient = await authorizeGet(form({ redirect_uri: app.redirectUri, response_type: 'code' }));
    assert.equal(noClient.statusCode, 400);
    assert.equal(noClient.headers.location, undefined);
  });

  it('B4: other errors go to the registered URI with error, error_description, state and iss', async () => {
    const res = await authorizeGet(authorizeQuery(app, { scope: 'sudo' }));
    assert.equal(res.statusCode, 302);
    const location = new URL(res.headers.location as string);
    assert.equal(`${location.origin}${location.pathname}`, app.redirectUri);
    assert.equal(location.searchParams.get('error'), 'invalid_scope');
    assert.ok(location.searchParams.get('error_description'));
    assert.equal(location.searchParams.get('state'), 'st-123');
    assert.equal(location.searchParams.get('iss'), 'http://basalt.test');
    const type = await authorizeGet(authorizeQuery(app, { response_type: 'token' }));
    assert.equal(new URL(type.headers.location as string).searchParams.get('error'), 'unsupported_response_type');
  });

  it('B5: refresh rotates; a rotated-out refresh token replayed revokes the whole family', async () => {
    const first = await issueTokens(t, cookie, app, { scope: 'api' });
    const second = (await refresh(app, first.refresh_token)).json();
    assert.notEqual(second.refresh_token, first.refresh_token);
    const replay = await refresh(app, first.refresh_token);
    assert.equal(replay.json().error, 'invalid_grant');
    assert.deepEqual((await introspect(app, second.access_token)).json(), { active: false });
    assert.equal((await refresh(app, second.refresh_token)).json().error, 'invalid_grant');
  });

  it('B5: a refresh token is bound to its client and its scope cannot grow', async () => {
    const other = await registerApp(t, { confidential: true });
    const tokens = await issueTokens(t, cookie, app, { scope: 'read_user' });
    assert.equal((await refresh(other, tokens.refresh_token)).json().error, 'invalid_grant');
    const wider = await refresh(app, tokens.refresh_token, { scope: 'read_user api' });
    assert.equal(wider.json().error, 'invalid_scope');
    const wrongSecret = await refresh({ ...app, secret: 'bss_wrong' }, tokens.refresh_token);
    assert.equal(wrongSecret.statusCode, 401);
    assert.equal(wrongSecret.json().error, 'invalid_client');
    assert.equal((await refresh(app, tokens.refresh_token)).statusCode, 200, 'failed attempts left the token usable');
  });

  it('B5: two concurrent refreshes with one refresh token: exactly one wins and the family is revoked', async () => {
    const tokens = await issueTokens(t, cookie, app, { scope: 'api' });
    const results = await Promise.all([refresh(app, tokens.refresh_token), refresh(app, tokens.refresh_token)]);
    const statuses = results.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 400]);
    const winner = results.find((r) => r.statusCode === 200)?.json();
    assert.deepEqual((await introspect(app, winner.access_token)).json(), { active: false });
  });

  it('B6: device user codes are base-20, 8 characters, normalised (see oauth-device.test.ts for polling)', async () => {
    const device = (
      await t.app.inject({
        method: 'POST',
        url: '/oauth/authorize_device',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ client_id: pub.clientId }),
      })
    ).json();
    assert.match(device.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(device.interval, 5);
    const row = await t.database.handle.db.selectFrom('oauth_device_grants').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(row.user_code_digest, digestToken(device.user_code.replace('-', '')));
  });

  it('B7: revocation answers 200 for unknown tokens, ignores a wrong hint, and kills the family of a refresh token', async () => {
    const revoke = (client: TestClient, values: Record<string, string>, auth = true) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: basic(client) } : {}) },
        payload: form(values),
      });
    const unknown = await revoke(app, { token: 'bso_unknown' });
    assert.equal(unknown.statusCode, 200);
    assert.deepEqual(unknown.json(), {});

    const a = await issueTokens(t, cookie, app, { scope: 'api' });
    assert.equal((await revoke(app, { token: a.access_token, token_type_hint: 'refresh_token' })).statusCode, 200);
    assert.equal((await tokenInfo(t, a.access_token)).statusCode, 401, 'a wrong hint still revokes');

    const b = await issueTokens(t, cookie, app, { scope: 'api' });
    assert.equal((await revoke(app, { token: b.refresh_token })).statusCode, 200);
    assert.deepEqual((await introspect(app, b.access_token)).json(), { active: false });
    assert.equal(await apiStatus(b.access_token), 401);
  });

  it("B7: another client's token is left untouched and bad client auth is invalid_client", async () => {
    const other = await registerApp(t, { confidential: true });
    const tokens = await issueTokens(t, cookie, app, { scope: 'api' });
    const foreign = await t.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: tokens.access_token, client_id: other.clientId, client_secret: other.secret }),
    });
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().error, 'unauthorized_client');
    assert.equal((await tokenInfo(t, tokens.access_token)).statusCode, 200);
    for (const values of [
      { token: tokens.access_token },
      { token: tokens.access_token, client_id: app.clientId, client_secret: 'bss_bad' },
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/oauth/revoke',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form(values),
      });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, 'invalid_client');
      assert.ok(res.headers['www-authenticate']);
    }
    assert.equal((await tokenInfo(t, tokens.access_token)).statusCode, 200);
  });

  it('B8: a consent POST without a valid CSRF token or with another interaction’s ticket grants nothing', async () => {
    const countGrants = async () => (await t.database.handle.db.selectFrom('oauth_access_grants').select('id').execute()).length;
    const before = await countGrants();
    const consent = await openConsent(t, cookie, authorizeQuery(app));
    const noCsrf = await postConsent(t, consent, 'approve', { authenticity_token: 'forged' });
    assert.equal(noCsrf.statusCode, 422, 'the page layer refuses a form without its session’s token');
    const other = await openConsent(t, cookie, authorizeQuery(app, { state: 'other' }));
    const mixed = await postConsent(t, consent, 'approve', { consent_ticket: other.fields.consent_ticket as string });
    assert.equal(mixed.statusCode, 403);
    const changedScope = await postConsent(t, consent, 'approve', { scope: 'api openid' });
    assert.equal(changedScope.statusCode, 403);
    assert.equal(await countGrants(), before, 'GET on the consent page and refused POSTs issued no code');
  });

  it("B8: a consent form answered with another user's session fails, and a form cannot be replayed", async () => {
    const mallory = await createUser(t.app);
    const malloryCookie = await sessionCookie(t, mallory);
    const consent = await openConsent(t, cookie, authorizeQuery(app));
    const csrfCookie = cookiesOf(consent.page).join('; ');
    const stolen = await postConsent(t, { ...consent, cookie: [malloryCookie, csrfCookie].join('; ') }, 'approve');
    assert.equal(stolen.statusCode, 422, 'the token is bound to the session it was drawn for');
    const ok = await postConsent(t, consent, 'approve');
    assert.equal(ok.statusCode, 303);
    const replay = await postConsent(t, consent, 'approve');
    assert.equal(replay.statusCode, 403);
    assert.equal(replay.headers.location, undefined);
  });

  it('B8: the session cookie is HttpOnly, SameSite=Lax and Secure on an https instance', async () => {
    const secure = await createTestApp({ env: { EXTERNAL_URL: 'https://basalt.test' }, sameDatabaseAs: t });
    try {
      const user = await createUser(secure.app);
      const page = await secure.app.inject({ method: 'GET', url: '/users/sign_in' });
      const csrf = formFields(page.body).authenticity_token as string;
      const res = await secure.app.inject({
        method: 'POST',
        url: '/users/sign_in',
        headers: { cookie: cookiesOf(page).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ authenticity_token: csrf, 'user[login]': user.user.username, 'user[password]': 'password-123' }),
      });
      const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('_service_session='));
      assert.ok(setCookie, `sign-in sets the session cookie (status ${res.statusCode})`);
      assert.match(setCookie, /HttpOnly/i);
      assert.match(setCookie, /SameSite=Lax/i);
      assert.match(setCookie, /Secure/i);
    } finally {
      await secure.close();
    }
  });

  it('B9: authorize, consent and device pages cannot be framed and send no Referer', async () => {
    const pages = [
      // The consent page itself: asked again even though this user's consent is remembered.
      await authorizeGet(authorizeQuery(app, { prompt: 'consent' })),
      await authorizeGet(form({ client_id: 'nope' })),
      await t.app.inject({ method: 'GET', url: '/oauth/device', headers: { cookie } }),
    ];
    for (const page of pages) {
      assert.equal(page.headers['x-frame-options'], 'DENY');
      assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.match(String(page.headers['cache-control']), /no-store/);
    }
  });

  it('B9: token, introspection, token info and userinfo answers are not cached', async () => {
    const tokens = await issueTokens(t, cookie, app, { scope: 'api openid' });
    const userinfo = await t.app.inject({
      method: 'GET',
      url: '/oauth/userinfo',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    for (const res of [await introspect(app, tokens.access_token), await tokenInfo(t, tokens.access_token), userinfo]) {
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
  });

  it('B10: tokens, codes and secrets are stored only as SHA-256 digests and carry 256 bits', async () => {
    const { code } = await obtainCode(t, cookie, app);
    const response = (await exchange(app, code)).json();
    const db = t.database.handle.db;
    const dump = JSON.stringify([
      await db.selectFrom('oauth_access_tokens').selectAll().execute(),
      await db.selectFrom('oauth_access_grants').selectAll().execute(),
      await db.selectFrom('oauth_applications').selectAll().execute(),
      await db.selectFrom('oauth_device_grants').selectAll().execute(),
    ]);
    // Tokens are `bso_<row id>_<secret>`: the row keeps the digest of the secret part.
    const secretOf = (token: string) => token.replace(/^bs[or]_[0-9]+_/, '');
    const accessSecret = secretOf(response.access_token);
    const refreshSecret = secretOf(response.refresh_token);
    for (const secret of [accessSecret, refreshSecret, code, app.secret]) {
      assert.ok(!dump.includes(secret), 'no raw secret in the database');
      assert.ok(dump.includes(digestToken(secret)), 'its digest is there');
    }
    assert.equal(Buffer.from(accessSecret, 'base64url').length, 32);
    assert.equal(Buffer.from(refreshSecret, 'base64url').length, 32);
    assert.equal(Buffer.from(code, 'base64url').length, 32);
  });

  it('B11: secrets are compared in constant time, and no oauth source compares secrets with ===', () => {
    assert.equal(constantTimeEqual('abc', 'abc'), true);
    assert.equal(constantTimeEqual('abc', 'abd'), false);
    assert.equal(constantTimeEqual('abc', 'abcd'), false);
    assert.equal(constantTimeEqual('', 'a'), false);
    const dir = path.resolve('src/modules/oauth');
    const files = readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => /\.tsx?$/.test(f));
    for (const file of files) {
      const source = readFileSync(path.join(dir, file), 'utf8');
      assert.doesNotMatch(source, /(secret|verifier|challenge|ticket)\w*\s*[!=]==(?!\s*(undefined|null))/i, file);
    }
  });

  it('B12: authorization responses carry iss, the consent POST answers 303, implicit and password grants are refused', async () => {
    const consent = await openConsent(t, cookie, authorizeQuery(app));
    const res = await postConsent(t, consent, 'approve');
    assert.equal(res.statusCode, 303);
    assert.equal(new URL(res.headers.location as string).searchParams.get('iss'), 'http://basalt.test');
    for (const grantType of ['password', 'client_credentials', 'implicit']) {
      const refused = await tokenRequest(t, {
        grant_type: grantType,
        client_id: app.clientId,
        client_secret: app.secret,
        username: 'x',
        password: 'y',
      });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.json().error, 'unsupported_grant_type');
    }
  });

  it('B12: client authentication failures are 401 invalid_client with WWW-Authenticate', async () => {
    const { code } = await obtainCode(t, cookie, app);
    const res = await exchange(app, code, { client_secret: 'bss_wrong' });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'invalid_client');
    assert.match(String(res.headers['www-authenticate']), /^Basic realm=/);
    const basicBad = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri },
      { authorization: basic(app, 'nope') },
    );
    assert.equal(basicBad.statusCode, 401);
  });

  it('B12: introspection needs client authentication and says only active:false for foreign, expired or revoked tokens', async () => {
    const tokens = await issueTokens(t, cookie, app, { scope: 'api' });
    const live = (await introspect(app, tokens.access_token)).json();
    assert.equal(live.active, true);
    assert.equal(live.client_id, app.clientId);
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/oauth/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: tokens.access_token }),
    });
    assert.equal(anonymous.statusCode, 401);
    const other = await registerApp(t, { confidential: true });
    assert.deepEqual((await introspect(other, tokens.access_token)).json(), { active: false });
    t.manual?.advance(7201_000);
    assert.deepEqual((await introspect(app, tokens.access_token)).json(), { active: false });
  });

  it('B12: access tokens in the query string are accepted, because SPEC "Using an access token" requires it (documented departure)', async () => {
    const tokens = await issueTokens(t, cookie, app, { scope: 'api' });
    const res = await t.api('GET', `/user?access_token=${tokens.access_token}`, { token: null });
    assert.equal(res.statusCode, 200);
  });
});

describe("a blocked user's consents end with the block", () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('refresh tokens, unexchanged codes and introspection stop; unblocking does not bring them back', async () => {
    const bob = await createUser(t.app);
    const cookie = await sessionCookie(t, bob);
    const client = await registerApp(t);
    const tokens = await issueTokens(t, cookie, client);
    const { code } = await obtainCode(t, cookie, client);
    const other = await createUser(t.app);
    const othersTokens = await issueTokens(t, await sessionCookie(t, other), client);

    assert.equal((await t.api('POST', `/users/${bob.user.id}/block`)).statusCode, 201);
    const refreshed = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.clientId,
      client_secret: client.secret,
    });
    assert.equal(refreshed.statusCode, 400);
    assert.equal(refreshed.json().error, 'invalid_grant');
    const exchanged = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      client_secret: client.secret,
    });
    assert.equal(exchanged.statusCode, 400);
    assert.equal(exchanged.json().error, 'invalid_grant');
    const introspected = await t.app.inject({
      method: 'POST',
      url: '/oauth/introspect',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
      payload: form({ token: tokens.refresh_token }),
    });
    assert.deepEqual(introspected.json(), { active: false });

    assert.equal((await t.api('POST', `/users/${bob.user.id}/unblock`)).statusCode, 201);
    assert.equal((await tokenInfo(t, tokens.access_token)).statusCode, 401);
    // Another user's tokens of the same application are untouched.
    assert.equal((await tokenInfo(t, othersTokens.access_token)).statusCode, 200);
  });
});
