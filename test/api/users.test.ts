import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';

describe('users API', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('GET /user answers the root token owner with admin fields', async () => {
    const res = await t.api('GET', '/user');
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.username, 'root');
    assert.equal(body.is_admin, true);
    assert.equal(typeof body.created_at, 'string');
  });

  it('GET /user without a credential is 401 with the spec body', async () => {
    const res = await t.api('GET', '/user', { token: null });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  });

  it('an unknown token is 401 with the spec body', async () => {
    const res = await t.api('GET', '/user', { token: 'bsp_nope' });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), { message: '401 Unauthorized' });
  });

  it('POST /users creates a user (admin) and names a missing attribute', async () => {
    const created = await t.api('POST', '/users', {
      body: { username: 'alice', name: 'Alice', email: 'alice@example.com', password: 'password-123' },
    });
    assert.equal(created.statusCode, 201);
    assert.equal(created.json().username, 'alice');
    const missing = await t.api('POST', '/users', { body: { username: 'bob', name: 'Bob' } });
    assert.equal(missing.statusCode, 400);
    assert.equal(typeof missing.json().message, 'string');
    assert.match(missing.json().message, /email/);
  });

  it('a taken username is 409', async () => {
    const res = await t.api('POST', '/users', {
      body: { username: 'ALICE', name: 'A', email: 'other@example.com', password: 'password-123' },
    });
    assert.equal(res.statusCode, 409);
    assert.match(res.json().message, /taken/);
  });

  it('a reserved name cannot be a username', async () => {
    const res = await t.api('POST', '/users', { body: { username: 'api', name: 'A', email: 'api@example.com', password: 'password-123' } });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(Object.keys(res.json().message), ['username']);
  });

  it('a bio over 255 characters fails validation with the object body', async () => {
    const res = await t.api('POST', '/users', {
      body: { username: 'carol', name: 'Carol', email: 'carol@example.com', password: 'password-123', bio: 'x'.repeat(256) },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { bio: ['is too long (maximum is 255 characters)'] } });
  });

  it('private_profile: null is accepted as false (version 4)', async () => {
    const res = await t.api('POST', '/users', {
      body: { username: 'dave', name: 'Dave', email: 'dave@example.com', password: 'password-123', private_profile: null },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().private_profile, false);
  });

  it('a non-numeric integer path parameter is 400', async () => {
    const res = await t.api('GET', '/users/abc');
    assert.equal(res.statusCode, 400);
    assert.ok(res.json().message);
  });

  it('a non-admin cannot create users (403)', async () => {
    const user = await createUser(t.app);
    const res = await t.api('POST', '/users', { token: user.token, body: { username: 'eve', name: 'Eve', email: 'eve@example.com' } });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  });

  it('GET /users paginates with every header and Link', async () => {
    for (let i = 0; i < 3; i += 1) await createUser(t.app);
    const res = await t.api('GET', '/users?per_page=2&page=2');
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().length, 2);
    assert.equal(res.headers['x-page'], '2');
    assert.equal(res.headers['x-per-page'], '2');
    assert.equal(res.headers['x-prev-page'], '1');
    const total = Number(res.headers['x-total']);
    assert.ok(total >= 5);
    assert.equal(res.headers['x-total-pages'], String(Math.ceil(total / 2)));
    const link = String(res.headers.link);
    assert.match(link, /<http:\/\/basalt\.test\/api\/v4\/users\?per_page=2&page=1>; rel="prev"/);
    assert.match(link, /rel="first"/);
    assert.match(link, /rel="last"/);
  });

  it('per_page is capped at 100', async () => {
    const res = await t.api('GET', '/users?per_page=500');
    assert.equal(res.headers['x-per-page'], '100');
  });

  it('a conditional GET with the ETag answers 304', async () => {
    const first = await t.api('GET', '/user');
    const etag = String(first.headers.etag);
    assert.ok(etag.startsWith('W/"'));
    const second = await t.api('GET', '/user', { headers: { 'if-none-match': etag } });
    assert.equal(second.statusCode, 304);
    assert.equal(second.body, '');
  });
});
