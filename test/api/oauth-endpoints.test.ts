import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { TestUser } from '../helpers/factories.js';
import {
  cookiesOf,
  form,
  formFields,
  issueTokens,
  obtainCode,
  registerApp,
  sessionCookie,
  tokenRequest,
  type TestClient,
} from '../helpers/oauth.js';
import { appWithUsers } from '../helpers/suite.js';

describe('OAuth applications, userinfo, discovery, CORS and error bodies', () => {
  let t: TestApp;
  let alice: TestUser;
  let cookie: string;
  let app: TestClient;

  before(async () => {
    ({ t, alice } = await appWithUsers(['alice']));
    cookie = await sessionCookie(t, alice);
    app = await registerApp(t, { confidential: true, scopes: 'api read_user openid profile email' });
  });
  after(() => t.close());

  describe('admin API /api/v4/applications', () => {
    it('POST creates with a bss_ secret shown once; GET lists without secrets', async () => {
      const res = await t.api('POST', '/applications', {
        body: { name: 'CI', redirect_uri: 'https://ci.example/cb', scopes: 'api read_user', confidential: false },
      });
      assert.equal(res.statusCode, 201);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['application_id', 'application_name', 'callback_url', 'confidential', 'id', 'secret']);
      assert.match(body.secret, /^bss_[A-Za-z0-9_-]{43}$/);
      assert.equal(body.confidential, false);
      const list = await t.api('GET', '/applications');
      assert.equal(list.statusCode, 200);
      const listed = list.json().find((a: { id: number }) => a.id === body.id);
      assert.deepEqual(listed, {
        id: body.id,
        application_id: body.application_id,
        application_name: 'CI',
        callback_url: 'https://ci.example/cb',
        confidential: false,
      });
    });

    it('confidential defaults to true', async () => {
      const res = await t.api('POST', '/applications', { body: { name: 'D', redirect_uri: 'https://d.example/cb', scopes: 'api' } });
      assert.equal(res.json().confidential, true);
    });

    it('validation: missing attribute, bad redirect URI, unknown scope', async () => {
      const missing = await t.api('POST', '/applications', { body: { name: 'x', redirect_uri: 'https://x.example/cb' } });
      assert.equal(missing.statusCode, 400);
      assert.match(missing.json().message, /scopes/);
      const badUri = await t.api('POST', '/applications', {
        body: { name: 'x', redirect_uri: 'https://x.example/cb#frag', scopes: 'api' },
      });
      assert.deepEqual(badUri.json(), { message: { redirect_uri: ['cannot contain a fragment.'] } });
      const js = await t.api('POST', '/applications', { body: { name: 'x', redirect_uri: 'javascript:alert(1)', scopes: 'api' } });
      assert.deepEqual(js.json(), { message: { redirect_uri: ['is forbidden by the server.'] } });
      const relative = await t.api('POST', '/applications', { body: { name: 'x', redirect_uri: '/cb', scopes: 'api' } });
      assert.deepEqual(relative.json(), { message: { redirect_uri: ['must be an absolute URI.'] } });
      const scope = await t.api('POST', '/applications', { body: { name: 'x', redirect_uri: 'https://x.example/cb', scopes: 'api nope' } });
      assert.deepEqual(scope.json(), { message: { scopes: ["doesn't match those configured on the server."] } });
    });

    it('renew-secret gives a new secret; the old one stops working', async () => {
      const created = await registerApp(t, { confidential: true, scopes: 'api' });
      const renewed = await t.api('POST', `/applications/${created.id}/renew-secret`);
      assert.equal(renewed.statusCode, 201);
      const secret = renewed.json().secret;
      assert.notEqual(secret, created.secret);
      const revoke = (s: string) =>
        t.app.inject({
          method: 'POST',
          url: '/oauth/revoke',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: form({ token: 'bso_x', client_id: created.clientId, client_secret: s }),
        });
      assert.equal((await revoke(created.secret)).statusCode, 401);
      assert.equal((await revoke(secret)).statusCode, 200);
    });

    it('DELETE removes the application and its tokens; unknown is 404', async () => {
      const created = await registerApp(t, { confidential: true, scopes: 'api' });
      const tokens = await issueTokens(t, cookie, created);
      const res = await t.api('DELETE', `/applications/${created.id}`);
      assert.equal(res.statusCode, 204);
      const info = await t.app.inject({
        method: 'GET',
        url: '/oauth/token/info',
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      assert.equal(info.statusCode, 401);
      const again = await t.api('DELETE', `/applications/${created.id}`);
      assert.equal(again.statusCode, 404);
      assert.deepEqual(again.json(), { message: '404 Application Not Found' });
    });

    it('non-admins get 403, anonymous callers 401', async () => {
      assert.equal((await t.api('GET', '/applications', { token: alice.token })).statusCode, 403);
      assert.equal((await t.api('GET', '/applications', { token: null })).statusCode, 401);
    });
  });

  describe('/user_settings/applications page', () => {
    it('signed-out visitors go to sign-in and back', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/user_settings/applications' });
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent('/user_settings/applications')}`);
    });

    it('create shows the ID and secret once, lists only own apps, renews and deletes', async () => {
      const page = await t.app.inject({ method: 'GET', url: '/user_settings/applications', headers: { cookie } });
      assert.equal(page.statusCode, 200);
      const jar = [cookie, ...cookiesOf(page)].join('; ');
      const csrf = formFields(page.body).authenticity_token as string;
      const post = (url: string, values: string) =>
        t.app.inject({
          method: 'POST',
          url,
          headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
          payload: values,
        });
      const created = await post(
        '/user_settings/applications',
        `${form({ authenticity_token: csrf, name: 'My app', redirect_uri: 'https://mine.example/cb\r\nhttp://127.0.0.1/cb', confidential: '1' })}&scopes=api&scopes=read_user`,
      );
      assert.equal(created.statusCode, 200, created.body.slice(0, 500));
      const secret = /id="application-secret">([^<]+)</.exec(created.body)?.[1];
      const uid = /id="application-id">([^<]+)</.exec(created.body)?.[1];
      assert.match(String(secret), /^bss_/);
      const row = await t.database.handle.db
        .selectFrom('oauth_applications')
        .selectAll()
        .where('uid', '=', String(uid))
        .executeTakeFirstOrThrow();
      assert.equal(row.owner_id, alice.user.id);
      assert.equal(row.redirect_uri, 'https://mine.example/cb\nhttp://127.0.0.1/cb');
      assert.equal(row.scopes, 'api read_user');
      const listing = await t.app.inject({ method: 'GET', url: '/user_settings/applications', headers: { cookie: jar } });
      assert.ok(listing.body.includes(String(uid)));
      assert.ok(!listing.body.includes(String(secret)), 'the secret is not shown again');
      assert.ok(!listing.body.includes(app.clientId), "another owner's application is not listed");

      const renewed = await post(`/user_settings/applications/${row.id}/renew`, form({ authenticity_token: csrf }));
      const newSecret = /id="application-secret">([^<]+)</.exec(renewed.body)?.[1];
      assert.ok(newSecret && newSecret !== secret);
      const foreign = await post(`/user_settings/applications/${app.id}/delete`, form({ authenticity_token: csrf }));
      assert.equal(foreign.statusCode, 404);
      const noCsrf = await post(`/user_settings/applications/${row.id}/delete`, form({ authenticity_token: 'x' }));
      assert.equal(noCsrf.statusCode, 422);
      const deleted = await post(`/user_settings/applications/${row.id}/delete`, form({ authenticity_token: csrf }));
      assert.equal(deleted.statusCode, 303);
      assert.equal(
        await t.database.handle.db.selectFrom('oauth_applications').select('id').where('id', '=', row.id).executeTakeFirst(),
        undefined,
      );
    });

    it('validation errors re-render the form with 400; admin-only scopes are not offered', async () => {
      const page = await t.app.inject({ method: 'GET', url: '/user_settings/applications', headers: { cookie } });
      assert.ok(!page.body.includes('value="sudo"'));
      const jar = [cookie, ...cookiesOf(page)].join('; ');
      const csrf = formFields(page.body).authenticity_token as string;
      const res = await t.app.inject({
        method: 'POST',
        url: '/user_settings/applications',
        headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
        payload: `${form({ authenticity_token: csrf, name: 'X', redirect_uri: 'https://x.example/cb' })}&scopes=sudo`,
      });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /configured on the server/);
    });
  });

  describe('OpenID Connect', () => {
    it('the id_token is RS256, signed by a key in the JWKS, with iss, aud, nonce', async () => {
      const { code } = await obtainCode(t, cookie, app, { scope: 'openid email', nonce: 'nonce-42' });
      const res = await tokenRequest(t, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: app.redirectUri,
        client_id: app.clientId,
        client_secret: app.secret,
      });
      const { id_token } = res.json();
      const jwks = (await t.app.inject({ method: 'GET', url: '/oauth/discovery/keys' })).json();
      assert.equal(jwks.keys[0].alg, 'RS256');
      assert.equal(jwks.keys[0].d, undefined, 'no private part');
      const { payload, protectedHeader } = await jwtVerify(id_token, createLocalJWKSet(jwks), {
        issuer: 'http://basalt.test',
        audience: app.clientId,
      });
      assert.equal(protectedHeader.alg, 'RS256');
      assert.equal(payload.sub, String(alice.user.id));
      assert.equal(payload.nonce, 'nonce-42');
      assert.equal(payload.email, alice.user.email);
    });

    it('the signing key is stored once in the database and shared by another process', async () => {
      const other = await createTestApp({ sameDatabaseAs: t });
      try {
        const mine = (await t.app.inject({ method: 'GET', url: '/oauth/discovery/keys' })).json();
        const theirs = (await other.app.inject({ method: 'GET', url: '/oauth/discovery/keys' })).json();
        assert.deepEqual(theirs, mine);
        const rows = await t.database.handle.db.selectFrom('oauth_signing_keys').selectAll().execute();
        assert.equal(rows.length, 1);
        assert.ok(!rows[0]?.private_jwk_sealed.includes('"d"'), 'the private key is sealed');
      } finally {
        await other.close();
      }
    });

    it('userinfo (GET and POST) needs openid; claims follow the scopes', async () => {
      const withOpenid = await issueTokens(t, cookie, app, { scope: 'openid email' });
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.app.inject({ method, url: '/oauth/userinfo', headers: { authorization: `Bearer ${withOpenid.access_token}` } });
        assert.equal(res.statusCode, 200);
        const claims = res.json();
        assert.equal(claims.sub, String(alice.user.id));
        assert.equal(claims.preferred_username, alice.user.username);
        assert.equal(claims.email, alice.user.email);
      }
      const apiOnly = await issueTokens(t, cookie, app, { scope: 'api' });
      const forbidden = await t.app.inject({
        method: 'GET',
        url: '/oauth/userinfo',
        headers: { authorization: `Bearer ${apiOnly.access_token}` },
      });
      assert.equal(forbidden.statusCode, 403);
      assert.equal(forbidden.json().error, 'insufficient_scope');
      assert.match(String(forbidden.headers['www-authenticate']), /insufficient_scope/);
      const anonymous = await t.app.inject({ method: 'GET', url: '/oauth/userinfo' });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(anonymous.json().error, 'invalid_token');
    });

    it('discovery names every endpoint and S256 only', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/openid-configuration' });
      assert.equal(res.statusCode, 200);
      const doc = res.json();
      assert.equal(doc.issuer, 'http://basalt.test');
      assert.equal(doc.token_endpoint, 'http://basalt.test/oauth/token');
      assert.equal(doc.jwks_uri, 'http://basalt.test/oauth/discovery/keys');
      assert.equal(doc.device_authorization_endpoint, 'http://basalt.test/oauth/authorize_device');
      assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(doc.id_token_signing_alg_values_supported, ['RS256']);
    });
  });

  describe('CORS (SPEC "CORS", reference §2.11)', () => {
    for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/userinfo', '/oauth/token/info']) {
      it(`preflight on ${path} allows Authorization, not X-Requested-With, never credentials`, async () => {
        const method = path === '/oauth/token/info' ? 'GET' : 'POST';
        const ok = await t.app.inject({
          method: 'OPTIONS',
          url: path,
          headers: {
            origin: 'https://spa.example',
            'access-control-request-method': method,
            'access-control-request-headers': 'authorization',
          },
        });
        assert.equal(ok.statusCode, 204);
        assert.equal(ok.headers['access-control-allow-origin'], '*');
        assert.match(String(ok.headers['access-control-allow-headers']), /Authorization/);
        assert.doesNotMatch(String(ok.headers['access-control-allow-headers']), /X-Requested-With/i);
        assert.equal(ok.headers['access-control-allow-credentials'], undefined);
        const refused = await t.app.inject({
          method: 'OPTIONS',
          url: path,
          headers: {
            origin: 'https://spa.example',
            'access-control-request-method': method,
            'access-control-request-headers': 'x-requested-with',
          },
        });
        assert.equal(refused.headers['access-control-allow-origin'], undefined);
      });
    }

    it('actual cross-origin responses allow any origin without credentials', async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/oauth/token/info',
        headers: { origin: 'https://spa.example', authorization: 'Bearer bso_x' },
      });
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      assert.equal(res.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
    });
  });

  describe('token endpoint errors (RFC 6749 §5.2)', () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: body,
      });

    it('invalid_request: missing grant_type, missing code, duplicated parameters, two auth methods', async () => {
      const missing = await post(form({ client_id: app.clientId }));
      assert.equal(missing.statusCode, 400);
      assert.deepEqual(missing.json(), { error: 'invalid_request', error_description: 'Missing required parameter: grant_type.' });
      const noCode = await post(
        form({ grant_type: 'authorization_code', client_id: app.clientId, client_secret: app.secret, redirect_uri: app.redirectUri }),
      );
      assert.equal(noCode.json().error, 'invalid_request');
      const duplicate = await post(`grant_type=authorization_code&code=a&code=b&client_id=${app.clientId}`);
      assert.equal(duplicate.statusCode, 400);
      assert.equal(duplicate.json().error, 'invalid_request');
      assert.match(duplicate.json().error_description, /more than once/);
      const both = await post(form({ grant_type: 'refresh_token', refresh_token: 'x', client_secret: app.secret }), {
        authorization: `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString('base64')}`,
      });
      assert.equal(both.json().error, 'invalid_request');
    });

    it('invalid_client (401 + WWW-Authenticate), invalid_grant, unsupported_grant_type', async () => {
      const unknown = await post(form({ grant_type: 'authorization_code', code: 'x', redirect_uri: app.redirectUri, client_id: 'nope' }));
      assert.equal(unknown.statusCode, 401);
      assert.equal(unknown.json().error, 'invalid_client');
      assert.ok(unknown.headers['www-authenticate']);
      assert.equal(unknown.headers['cache-control'], 'no-store');
      const noSecret = await post(
        form({ grant_type: 'authorization_code', code: 'x', redirect_uri: app.redirectUri, client_id: app.clientId }),
      );
      assert.equal(noSecret.statusCode, 401);
      const badCode = await post(
        form({
          grant_type: 'authorization_code',
          code: 'x',
          redirect_uri: app.redirectUri,
          client_id: app.clientId,
          client_secret: app.secret,
        }),
      );
      assert.equal(badCode.statusCode, 400);
      assert.equal(badCode.json().error, 'invalid_grant');
      const badRefresh = await post(
        form({ grant_type: 'refresh_token', refresh_token: 'bsr_x', client_id: app.clientId, client_secret: app.secret }),
      );
      assert.equal(badRefresh.json().error, 'invalid_grant');
      const grant = await post(form({ grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.secret }));
      assert.equal(grant.json().error, 'unsupported_grant_type');
    });

    it('a JSON body is not a form: invalid_request in the OAuth body', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'text/plain' },
        payload: 'grant_type=x',
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_request');
    });
  });

  describe('authorize endpoint', () => {
    it('signed-out users go to the sign-in page and come back to the same request', async () => {
      const query = form({
        client_id: app.clientId,
        redirect_uri: app.redirectUri,
        response_type: 'code',
        state: 'x',
        root_namespace_id: '12',
      });
      const res = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}` });
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent(`/oauth/authorize?${query}`)}`);
    });

    it('the consent page names the application and each scope, with a CSRF token', async () => {
      const query = form({ client_id: app.clientId, redirect_uri: app.redirectUri, response_type: 'code', scope: 'api read_user' });
      const res = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}`, headers: { cookie } });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /Test app/);
      assert.match(res.body, /<strong>api<\/strong>/);
      assert.match(res.body, /<strong>read_user<\/strong>/);
      assert.ok(formFields(res.body).authenticity_token);
      assert.match(res.body, /id="authorize"/);
      assert.match(res.body, /id="deny"/);
    });

    it('a malformed root_namespace_id is invalid_request; missing response_type is invalid_request', async () => {
      const bad = await t.app.inject({
        method: 'GET',
        url: `/oauth/authorize?${form({ client_id: app.clientId, redirect_uri: app.redirectUri, response_type: 'code', root_namespace_id: 'abc' })}`,
        headers: { cookie },
      });
      assert.equal(new URL(bad.headers.location as string).searchParams.get('error'), 'invalid_request');
      const noType = await t.app.inject({
        method: 'GET',
        url: `/oauth/authorize?${form({ client_id: app.clientId, redirect_uri: app.redirectUri })}`,
        headers: { cookie },
      });
      assert.equal(new URL(noType.headers.location as string).searchParams.get('error'), 'invalid_request');
    });
  });
});
