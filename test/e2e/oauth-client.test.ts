import assert from 'node:assert/strict';
import { freePort } from '../helpers/chromium.js';
import { after, before, describe, it } from 'node:test';
import * as oauth from 'oauth4webapi';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import { formFields, registerApp, sessionCookie, type TestClient } from '../helpers/oauth.js';

/** A free port on 127.0.0.1, so EXTERNAL_URL (the issuer) can name the listening address. */

const options = { [oauth.allowInsecureRequests]: true };

/** oauth4webapi as the client of every flow, against the server listening on 127.0.0.1. */
describe('OAuth end to end with oauth4webapi', () => {
  let t: TestApp;
  let base: string;
  let as: oauth.AuthorizationServer;
  let alice: TestUser;
  let cookie: string;
  let confidential: TestClient;
  let publicApp: TestClient;

  /** The browser's part: open the consent page with the session cookie and press a button. */
  async function consent(url: URL, decision: 'approve' | 'deny'): Promise<URL> {
    const page = await fetch(url, { headers: { cookie }, redirect: 'manual' });
    assert.equal(page.status, 200, await page.clone().text());
    const csrfCookie = (page.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const fields = formFields(await page.text());
    const answer = await fetch(`${base}/oauth/authorize`, {
      method: 'POST',
      headers: { cookie: [cookie, csrfCookie].filter(Boolean).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision }),
      redirect: 'manual',
    });
    assert.equal(answer.status, 303);
    return new URL(answer.headers.get('location') as string);
  }

  async function authorizationUrl(client: TestClient, params: Record<string, string>): Promise<URL> {
    const url = new URL(as.authorization_endpoint as string);
    url.search = new URLSearchParams({
      client_id: client.clientId,
      redirect_uri: client.redirectUri,
      response_type: 'code',
      // The consent page each time: alice's consent to the confidential client would be remembered.
      prompt: 'consent',
      ...params,
    }).toString();
    return url;
  }

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ manualClock: false, env: { EXTERNAL_URL: base } });
    await t.app.listen({ host: '127.0.0.1', port });
    alice = await createUser(t.app);
    cookie = await sessionCookie(t, alice);
    confidential = await registerApp(t, { confidential: true, scopes: 'api read_user openid profile email' });
    publicApp = await registerApp(t, { confidential: false, scopes: 'api read_user openid' });
  });
  after(() => t.close());

  it('discovery: the issuer document validates', async () => {
    const issuer = new URL(base);
    as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options }));
    assert.equal(as.issuer, base);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
  });

  it('authorization code with PKCE (public client), id_token, userinfo and refresh', async () => {
    const client: oauth.Client = { client_id: publicApp.clientId };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = await authorizationUrl(publicApp, {
      scope: 'openid api',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const callback = await consent(url, 'approve');
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, publicApp.redirectUri, verifier, options);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(tokens.expires_in, 7200);
    const claims = oauth.getValidatedIdTokenClaims(tokens);
    assert.equal(claims?.sub, String(alice.user.id));

    const info = await oauth.processUserInfoResponse(
      as,
      client,
      String(alice.user.id),
      await oauth.userInfoRequest(as, client, tokens.access_token, options),
    );
    assert.equal(info.preferred_username, alice.user.username);

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, options),
    );
    assert.notEqual(refreshed.access_token, tokens.access_token);
    const api = await oauth.protectedResourceRequest(
      refreshed.access_token,
      'GET',
      new URL(`${base}/api/v4/user`),
      undefined,
      undefined,
      options,
    );
    assert.equal(api.status, 200);
    await assert.rejects(
      oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${base}/api/v4/user`), undefined, undefined, options),
      (error: unknown) => {
        assert.ok(error instanceof oauth.WWWAuthenticateChallengeError);
        assert.equal(error.status, 401, 'the rotated-out access token no longer works');
        return true;
      },
    );
  });

  it('authorization code with a client secret (Basic), token info, introspection and revocation', async () => {
    const client: oauth.Client = { client_id: confidential.clientId };
    const auth = oauth.ClientSecretBasic(confidential.secret);
    const state = oauth.generateRandomState();
    const callback = await consent(await authorizationUrl(confidential, { scope: 'api read_user', state }), 'approve');
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, confidential.redirectUri, oauth.nopkce, options),
    );
    const info = await fetch(`${base}/oauth/token/info`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(info.status, 200);
    const body = (await info.json()) as { scope: string[]; application: { uid: string } };
    assert.deepEqual(body.scope, ['api', 'read_user']);
    assert.equal(body.application.uid, confidential.clientId);

    const live = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, options),
    );
    assert.equal(live.active, true);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, tokens.refresh_token as string, options));
    const dead = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, options),
    );
    assert.equal(dead.active, false);
  });

  it('client_secret_post works too, and a denied request comes back as access_denied', async () => {
    const client: oauth.Client = { client_id: confidential.clientId };
    const state = oauth.generateRandomState();
    const callback = await consent(await authorizationUrl(confidential, { scope: 'api', state }), 'deny');
    assert.throws(
      () => oauth.validateAuthResponse(as, client, callback, state),
      (error: unknown) => {
        assert.ok(error instanceof oauth.AuthorizationResponseError);
        assert.equal(error.error, 'access_denied');
        return true;
      },
    );
    const ok = await consent(await authorizationUrl(confidential, { scope: 'api', state }), 'approve');
    const params = oauth.validateAuthResponse(as, client, ok, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretPost(confidential.secret),
        params,
        confidential.redirectUri,
        oauth.nopkce,
        options,
      ),
    );
    assert.ok(tokens.access_token.startsWith('bso_'));
  });

  it('device authorization grant: pending, user approves on the page, token', async () => {
    const client: oauth.Client = { client_id: publicApp.clientId };
    const device = await oauth.processDeviceAuthorizationResponse(
      as,
      client,
      await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope: 'read_user' }, options),
    );
    assert.equal(device.interval, 5);
    const pending = await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, options);
    await assert.rejects(oauth.processDeviceCodeResponse(as, client, pending), (error: unknown) => {
      assert.ok(error instanceof oauth.ResponseBodyError);
      assert.equal(error.error, 'authorization_pending');
      return true;
    });

    const page = await fetch(device.verification_uri_complete as string, { headers: { cookie } });
    const csrfCookie = (page.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const jar = [cookie, csrfCookie].filter(Boolean).join('; ');
    const html = await page.text();
    const csrf = formFields(html).authenticity_token as string;
    assert.ok(html.includes(device.user_code));
    const post = (path: string, body: Record<string, string>) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
    assert.equal((await post('/oauth/device', { authenticity_token: csrf, user_code: device.user_code })).status, 200);
    assert.equal(
      (await post('/oauth/device/confirm', { authenticity_token: csrf, user_code: device.user_code, decision: 'approve' })).status,
      200,
    );

    // The client keeps the interval: a poll right away is answered slow_down, so wait as told.
    const early = await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, options);
    await assert.rejects(oauth.processDeviceCodeResponse(as, client, early), (error: unknown) => {
      assert.equal((error as oauth.ResponseBodyError).error, 'slow_down');
      return true;
    });
    await t.database.handle.db.updateTable('oauth_device_grants').set({ last_polled_at: 0 }).execute(); // instead of waiting 10 s
    const tokens = await oauth.processDeviceCodeResponse(
      as,
      client,
      await oauth.deviceCodeGrantRequest(as, client, oauth.None(), device.device_code, options),
    );
    assert.equal(tokens.scope, 'read_user');
    const api = await oauth.protectedResourceRequest(
      tokens.access_token,
      'GET',
      new URL(`${base}/api/v4/user`),
      undefined,
      undefined,
      options,
    );
    assert.equal(api.status, 200);
  });
});
