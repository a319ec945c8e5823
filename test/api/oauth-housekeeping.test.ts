import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';
import { form, obtainCode, pkcePair, registerApp, sessionCookie, type TestClient } from '../helpers/oauth.js';

const DAY = 86_400_000;

describe('OAuth housekeeping: expired codes and device grants go', () => {
  let t: TestApp;
  let client: TestClient;
  let cookie: string;
  before(async () => {
    t = await createTestApp();
    client = await registerApp(t, { confidential: false, scopes: 'api read_user' });
    cookie = await sessionCookie(t, await createUser(t.app));
  });
  after(() => t.close());

  const authorizeDevice = () =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/authorize_device',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ client_id: client.clientId, scope: 'api' }),
    });
  const counts = async () => {
    const db = t.app.platform.db;
    const codes = await db.selectFrom('oauth_access_grants').select('id').execute();
    const devices = await db.selectFrom('oauth_device_grants').select('id').execute();
    return { codes: codes.length, devices: devices.length };
  };
  const pending = () =>
    t.app.platform.db
      .selectFrom('background_jobs')
      .select(['id', 'run_at'])
      .where('kind', '=', 'oauth_housekeeping')
      .where('state', 'in', ['queued', 'running'])
      .execute();

  it('keeps one job scheduled; a run deletes what expired over a day ago and keeps the rest', async () => {
    assert.equal((await pending()).length, 1, 'scheduled at start');
    for (let i = 0; i < 3; i += 1) assert.equal((await authorizeDevice()).statusCode, 200);
    await obtainCode(t, cookie, client, { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    assert.deepEqual(await counts(), { codes: 1, devices: 3 });

    t.manual?.advance(2 * DAY);
    assert.equal((await authorizeDevice()).statusCode, 200); // a live one, made after the others expired
    await t.app.platform.jobs.drain();
    assert.deepEqual(await counts(), { codes: 0, devices: 1 });
    const next = await pending();
    assert.equal(next.length, 1, 'the run scheduled the next one');
    assert.equal(next[0]?.run_at, t.clock.now() + 3_600_000);
  });
});

describe('RATE_LIMITS oauth: the anonymous OAuth endpoints per client IP', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { RATE_LIMITS: 'oauth=3/m' } });
  });
  after(() => t.close());

  const post = (url: string, ip: string) =>
    t.app.inject({
      method: 'POST',
      url,
      remoteAddress: ip,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'nobody', token: 'x' }),
    });

  it('counts /oauth/token, /oauth/revoke, /oauth/introspect and /oauth/authorize_device together; 429 past it', async () => {
    const ip = '10.77.0.1';
    for (const url of ['/oauth/token', '/oauth/revoke', '/oauth/introspect']) assert.equal((await post(url, ip)).statusCode, 401, url);
    const refused = await post('/oauth/authorize_device', ip);
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await post('/oauth/token', '10.77.0.2')).statusCode, 401, 'another client has its own count');
    t.manual?.advance(61_000);
    assert.equal((await post('/oauth/token', ip)).statusCode, 401, 'the window ends');
  });
});
