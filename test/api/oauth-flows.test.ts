import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import type { TestUser } from '../helpers/factories.js';
import {
  authorizeQuery,
  basic,
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

describe('OAuth authorization code and refresh flows', () => {
  let t: TestApp;
  let alice: TestUser;
  let cookie: string;
  let confidential: TestClient;
  let publicApp: TestClient;

  before(async () => {
    ({ t, alice } = await appWithUsers(['alice']));
    cookie = await sessionCookie(t, alice);
    confidential = await registerApp(t, { confidential: true });
    publicApp = await registerApp(t, { confidential: false, scopes: 'api read_user' });
  });
  after(() => t.close());

  it('authorization code with PKCE: the token response is exactly as SPEC and the token works on the API', async () => {
    const { verifier, challenge } = pkcePair();
    const { code, location } = await obtainCode(t, cookie, publicApp, { code_challenge: challenge, code_challenge_method: 'S256' });
    assert.equal(location.searchParams.get('state'), 'st-123');
    assert.equal(location.searchParams.get('iss'), 'http://basalt.test');
    const res = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: publicApp.redirectUri,
      client_id: publicApp.clientId,
      code_verifier: verifier,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'created_at', 'expires_in', 'refresh_token', 'token_type']);
    assert.equal(body.token_type, 'bearer');
    assert.equal(body.expires_in, 7200);
    assert.equal(body.created_at, Math.floor(t.clock.now() / 1000));
    assert.match(body.access_token, /^bso_[1-9][0-9]*_[A-Za-z0-9_-]{43}$/);
    assert.match(body.refresh_token, /^bsr_[1-9][0-9]*_[A-Za-z0-9_-]{43}$/);
    const me = await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${body.access_token}` } });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().username, alice.user.username);
    const viaQuery = await t.api('GET', `/user?access_token=${body.access_token}`, { token: null });
    assert.equal(viaQuery.statusCode, 200);
  });

  it('authorization code with a client secret (no PKCE), in the body or with HTTP Basic', async () => {
    const first = await obtainCode(t, cookie, confidential, { scope: 'api openid', nonce: 'n-1' });
    const res = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: first.code,
      redirect_uri: confidential.redirectUri,
      client_id: confidential.clientId,
      client_secret: confidential.secret,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(res.json().id_token, 'openid was granted, so an id_token comes back');
    const second = await obtainCode(t, cookie, confidential, { scope: 'api' });
    const viaBasic = await tokenRequest(
      t,
      { grant_type: 'authorization_code', code: second.code, redirect_uri: confidential.redirectUri },
      { authorization: basic(confidential) },
    );
    assert.equal(viaBasic.statusCode, 200, viaBasic.body);
    assert.equal(viaBasic.json().id_token, undefined);
  });

  it('refresh: a new pair, the old pair dies at once, and it works after the access token expired', async () => {
    const tokens = await issueTokens(t, cookie, confidential, { scope: 'api' });
    t.manual?.advance(7201 * 1000);
    const expired = await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().error, 'invalid_token');
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: confidential.clientId,
      client_secret: confidential.secret,
      redirect_uri: confidential.redirectUri,
    });
    assert.equal(res.statusCode, 200, res.body);
    const fresh = res.json();
    assert.notEqual(fresh.refresh_token, tokens.refresh_token);
    assert.equal(fresh.token_type, 'bearer');
    assert.equal((await tokenInfo(t, fresh.access_token)).statusCode, 200);
    assert.equal((await tokenInfo(t, tokens.access_token)).statusCode, 401);
  });

  it('refresh with a different redirect_uri is invalid_grant', async () => {
    const tokens = await issueTokens(t, cookie, confidential, { scope: 'api' });
    const res = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: confidential.clientId,
      client_secret: confidential.secret,
      redirect_uri: 'https://app.example/other',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
  });

  it('token info has every SPEC field and the deprecated aliases', async () => {
    const tokens = await issueTokens(t, cookie, confidential, { scope: 'api read_user' });
    t.manual?.advance(100 * 1000);
    const res = await tokenInfo(t, tokens.access_token);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      resource_owner_id: alice.user.id,
      scope: ['api', 'read_user'],
      expires_in: 7100,
      application: { uid: confidential.clientId },
      created_at: Math.floor((t.clock.now() - 100_000) / 1000),
      scopes: ['api', 'read_user'],
      expires_in_seconds: 7100,
    });
    const viaQuery = await t.app.inject({ method: 'GET', url: `/oauth/token/info?access_token=${tokens.access_token}` });
    assert.equal(viaQuery.statusCode, 200);
  });

  it("a token's id with another secret, or the other kind's prefix, is refused everywhere", async () => {
    const tokens = await issueTokens(t, cookie, confidential, { scope: 'api' });
    const [, id, secret] = /^bso_([0-9]+)_(.+)$/.exec(tokens.access_token) ?? [];
    assert.ok(id && secret);
    const forged = `bso_${id}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    assert.equal((await tokenInfo(t, forged)).statusCode, 401);
    assert.equal((await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${forged}` } })).statusCode, 401);
    // The refresh secret of the same row does not pass as its access token, nor the other way round.
    const refreshSecret = tokens.refresh_token.replace(/^bsr_[0-9]+_/, '');
    assert.equal((await tokenInfo(t, `bso_${id}_${refreshSecret}`)).statusCode, 401);
    const swapped = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: `bsr_${id}_${secret}`,
      client_id: confidential.clientId,
      client_secret: confidential.secret,
    });
    assert.equal(swapped.statusCode, 400);
    assert.equal(swapped.json().error, 'invalid_grant');
    assert.equal((await tokenInfo(t, tokens.access_token)).statusCode, 200, 'the real token still works');
  });

  it('token info of an unknown token is 401 invalid_token', async () => {
    const res = await tokenInfo(t, 'bso_unknown');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { error: 'invalid_token', error_description: 'The access token is invalid', state: 'unauthorized' });
    assert.match(String(res.headers['www-authenticate']), /^Bearer .*error="invalid_token"/);
  });

  it('an OAuth token stops working on the API after 7200 s', async () => {
    const tokens = await issueTokens(t, cookie, confidential, { scope: 'api' });
    t.manual?.advance(7199 * 1000);
    assert.equal(
      (await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${tokens.access_token}` } })).statusCode,
      200,
    );
    t.manual?.advance(1000);
    const res = await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(res.statusCode, 401);
  });

  it('OAuth token scopes apply on the API: read_user cannot write', async () => {
    const tokens = await issueTokens(t, cookie, confidential, { scope: 'read_user' });
    const read = await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(read.statusCode, 200);
    const write = await t.api('POST', '/projects', {
      token: null,
      headers: { authorization: `Bearer ${tokens.access_token}` },
      body: { name: 'x' },
    });
    assert.equal(write.statusCode, 403);
    assert.equal(write.json().error, 'insufficient_scope');
  });

  it('a deny redirects with access_denied, its description and state', async () => {
    const consent = await openConsent(t, cookie, authorizeQuery(confidential));
    const res = await postConsent(t, consent, 'deny');
    assert.equal(res.statusCode, 303);
    const location = new URL(res.headers.location as string);
    assert.equal(location.origin + location.pathname, confidential.redirectUri);
    assert.equal(location.searchParams.get('error'), 'access_denied');
    assert.equal(location.searchParams.get('error_description'), 'The resource owner or authorization server denied the request.');
    assert.equal(location.searchParams.get('state'), 'st-123');
  });
});
