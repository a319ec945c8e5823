import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { twoProcesses, type TwoProcesses } from '../helpers/two-processes.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import { form, issueTokens, registerApp, sessionCookie, tokenRequest, type TestClient } from '../helpers/oauth.js';

/**
 * OAuth access-token lookups are cached per process and checked against the credentials
 * cache epoch (docs/decisions.md, "Cache epochs"): a revocation or a block through one
 * process must be refused at once by another process that had the token cached — no
 * waiting, no clock moved. Two app instances on one database stand for two processes; B
 * serves on a real socket, as another process would (each request its own I/O event).
 */
describe('cached OAuth and personal access tokens across two instances', () => {
  let two: TwoProcesses;
  let a: TestApp;
  let owner: TestUser;
  let client: TestClient;
  let cookie: string;
  let bUrl: string;

  /** A request to B over HTTP; answers its status. */
  const onB = async (path: string, accessToken: string): Promise<number> =>
    (await fetch(`${bUrl}${path}`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
  const tokenInfoOnB = (accessToken: string) => onB('/oauth/token/info', accessToken);
  const onBWithToken = async (path: string, token: string): Promise<number> =>
    (await fetch(`${bUrl}${path}`, { headers: { 'private-token': token } })).status;

  before(async () => {
    two = await twoProcesses();
    ({ a, bUrl } = two);
    owner = await createUser(a.app);
    client = await registerApp(a, { scopes: 'api read_user' });
    cookie = await sessionCookie(a, owner);
  });
  after(() => two?.close());

  /** B has looked the token up (twice: the second answer comes from its cache). */
  async function cachedOnB(accessToken: string): Promise<void> {
    for (let i = 0; i < 2; i += 1) assert.equal(await tokenInfoOnB(accessToken), 200);
    assert.equal(await onB('/api/v4/user', accessToken), 200);
  }

  it('a token revoked through A is refused by B at once, on token info and on the API', async () => {
    const issued = await issueTokens(a, cookie, client, { scope: 'api' });
    await cachedOnB(issued.access_token);
    const revoke = await a.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ token: issued.access_token, client_id: client.clientId, client_secret: client.secret }),
    });
    assert.equal(revoke.statusCode, 200, revoke.body);
    assert.equal(await tokenInfoOnB(issued.access_token), 401);
    assert.equal(await onB('/api/v4/user', issued.access_token), 401);
  });

  it('a refresh through A retires the old access token on B at once', async () => {
    const issued = await issueTokens(a, cookie, client, { scope: 'api' });
    await cachedOnB(issued.access_token);
    const refreshed = await tokenRequest(a, {
      grant_type: 'refresh_token',
      refresh_token: issued.refresh_token,
      client_id: client.clientId,
      client_secret: client.secret,
    });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal(await tokenInfoOnB(issued.access_token), 401, 'the rotated-out access token');
    assert.equal(await tokenInfoOnB(refreshed.json<{ access_token: string }>().access_token), 200, 'the new one');
  });

  it('blocking the owner through A refuses their cached tokens on B at once; unblocking restores the personal one', async () => {
    const user = await createUser(a.app);
    const userCookie = await sessionCookie(a, user);
    const issued = await issueTokens(a, userCookie, client, { scope: 'api' });
    await cachedOnB(issued.access_token);
    for (let i = 0; i < 2; i += 1) assert.equal(await onBWithToken('/api/v4/user', user.token), 200);
    assert.equal((await a.api('POST', `/users/${user.user.id}/block`)).statusCode, 201);
    assert.equal(await tokenInfoOnB(issued.access_token), 401);
    assert.equal(await onBWithToken('/api/v4/user', user.token), 403, 'a blocked user');
    assert.equal((await a.api('POST', `/users/${user.user.id}/unblock`)).statusCode, 201);
    assert.equal(await onBWithToken('/api/v4/user', user.token), 200);
    // The block ended the user's OAuth consents (docs/decisions.md): that token stays revoked.
    assert.equal(await tokenInfoOnB(issued.access_token), 401);
  });

  it('a personal access token revoked or rotated through A is refused by B at once', async () => {
    for (const action of ['revoke', 'rotate'] as const) {
      const user = await createUser(a.app);
      for (let i = 0; i < 2; i += 1) assert.equal(await onBWithToken('/api/v4/user', user.token), 200);
      const self = await a.api('GET', '/personal_access_tokens/self', { token: user.token });
      assert.equal(self.statusCode, 200, self.body);
      const id = self.json<{ id: number }>().id;
      const res =
        action === 'revoke'
          ? await a.api('DELETE', `/personal_access_tokens/${id}`, { token: user.token })
          : await a.api('POST', `/personal_access_tokens/${id}/rotate`, { token: user.token });
      assert.ok(res.statusCode === 204 || res.statusCode === 200, `${action}: ${res.statusCode} ${res.body}`);
      assert.equal(await onBWithToken('/api/v4/user', user.token), 401, `${action}d token on B`);
    }
  });

  it('deleting the application through A ends its cached tokens on B at once', async () => {
    const other = await registerApp(a, { scopes: 'api' });
    const issued = await issueTokens(a, cookie, other, { scope: 'api' });
    await cachedOnB(issued.access_token);
    assert.equal((await a.api('DELETE', `/applications/${other.id}`)).statusCode, 204);
    assert.equal(await tokenInfoOnB(issued.access_token), 401);
  });
});
