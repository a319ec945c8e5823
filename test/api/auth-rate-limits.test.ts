// Not in the PostgreSQL tier: rate-limit counters and the CAPTCHA service live in memory or Redis, not the database.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser } from '../helpers/factories.js';

const TOO_MANY = { message: { error: 'This endpoint has been requested too many times. Try again later.' } };
let ipSeq = 0;
const freshIp = () => `10.${(ipSeq = ipSeq + 1)}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

function get(t: TestApp, url: string, ip: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url: `/api/v4${url}`, remoteAddress: ip, headers });
}

function assertThrottled(t: TestApp, res: LightMyRequestResponse, name: string, limitPerMinute: number, observed: number): void {
  assert.equal(res.statusCode, 429);
  assert.deepEqual(res.json(), TOO_MANY);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  assert.equal(res.headers['ratelimit-name'], `throttle_${name}`);
  assert.equal(res.headers['ratelimit-limit'], String(limitPerMinute));
  assert.equal(res.headers['ratelimit-observed'], String(observed));
  assert.equal(res.headers['ratelimit-remaining'], '0');
  // The window's end: a Unix time within the next minute, and the same second as an HTTP date.
  const reset = Number(res.headers['ratelimit-reset']);
  const now = t.clock.now() / 1000;
  assert.ok(reset >= now && reset <= now + 61, `RateLimit-Reset ${reset} vs now ${now}`);
  const resetTime = Date.parse(String(res.headers['ratelimit-resettime'])) / 1000;
  assert.ok(reset - resetTime >= 0 && reset - resetTime <= 1, 'RateLimit-ResetTime names the same second');
}

describe('API rate limits (in memory)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ env: { RATE_LIMITS: 'api_unauthenticated=3/m,api_authenticated=3/m' } });
  });
  after(() => t.close());

  it('unauthenticated requests are limited per IP: 429 with Retry-After and RateLimit-* headers', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i += 1) assert.equal((await get(t, '/projects', ip)).statusCode, 200);
    assertThrottled(t, await get(t, '/projects', ip), 'api_unauthenticated', 3, 4);
    assert.equal((await get(t, '/projects', freshIp())).statusCode, 200, 'another IP has its own count');
  });

  it('the window ends and requests pass again', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i += 1) await get(t, '/projects', ip);
    assert.equal((await get(t, '/projects', ip)).statusCode, 429);
    t.manual?.advance(61_000);
    assert.equal((await get(t, '/projects', ip)).statusCode, 200);
  });

  it('failed credentials count as unauthenticated requests, so token guessing is throttled', async () => {
    const ip = freshIp();
    for (let i = 0; i < 3; i += 1) {
      const res = await get(t, '/user', ip, { 'private-token': `bsp_guess-${i}` });
      assert.equal(res.statusCode, 401);
    }
    assertThrottled(t, await get(t, '/user', ip, { 'private-token': 'bsp_guess-x' }), 'api_unauthenticated', 3, 4);
  });

  it('authenticated requests are limited per user, whatever the IP', async () => {
    const alice = await createUser(t.app);
    const bob = await createUser(t.app);
    for (let i = 0; i < 3; i += 1) assert.equal((await get(t, '/user', freshIp(), { 'private-token': alice.token })).statusCode, 200);
    assertThrottled(t, await get(t, '/user', freshIp(), { 'private-token': alice.token }), 'api_authenticated', 3, 4);
    assert.equal((await get(t, '/user', freshIp(), { 'private-token': bob.token })).statusCode, 200, 'another user has their own count');
  });
});

describe('API rate limits shared through Redis', () => {
  const redisUrl = process.env.TEST_REDIS_URL;
  const skip = redisUrl ? false : 'TEST_REDIS_URL is not set (a Redis server is needed to share counters)';
  const apps: TestApp[] = [];
  after(async () => {
    for (const app of apps) await app.close();
  });

  it('two app instances share one limit', { skip }, async () => {
    const env = {
      REDIS_URL: redisUrl ?? '',
      REDIS_PREFIX: `basalt-test-${randomBytes(6).toString('hex')}:`,
      RATE_LIMITS: 'api_unauthenticated=4/m',
    };
    const first = await createTestApp({ env });
    apps.push(first);
    const second = await createTestApp({ env });
    apps.push(second);
    const ip = freshIp();
    const codes: number[] = [];
    for (let i = 0; i < 4; i += 1) codes.push((await get(i % 2 === 0 ? first : second, '/projects', ip)).statusCode);
    assert.deepEqual(codes, [200, 200, 200, 200]);
    assertThrottled(second, await get(second, '/projects', ip), 'api_unauthenticated', 4, 5);
    assertThrottled(first, await get(first, '/projects', ip), 'api_unauthenticated', 4, 6);
  });
});

describe('per-IP limits behind a reverse proxy (TRUST_PROXY)', () => {
  const PROXY = '10.9.9.9';
  const fromProxy = (t: TestApp, client: string) =>
    t.app.inject({ method: 'GET', url: '/api/v4/projects', remoteAddress: PROXY, headers: { 'x-forwarded-for': client } });

  it("a trusted proxy's X-Forwarded-For names the client: each client has its own count", async () => {
    const t = await createTestApp({ env: { RATE_LIMITS: 'api_unauthenticated=2/m', TRUST_PROXY: PROXY } });
    try {
      for (let i = 0; i < 2; i += 1) assert.equal((await fromProxy(t, '203.0.113.1')).statusCode, 200);
      assert.equal((await fromProxy(t, '203.0.113.1')).statusCode, 429);
      assert.equal((await fromProxy(t, '203.0.113.2')).statusCode, 200, 'another client behind the same proxy');
    } finally {
      await t.close();
    }
  });

  it('without TRUST_PROXY the header is ignored: a client cannot pick a fresh address per request', async () => {
    const t = await createTestApp({ env: { RATE_LIMITS: 'api_unauthenticated=2/m' } });
    try {
      assert.equal((await fromProxy(t, '203.0.113.1')).statusCode, 200);
      assert.equal((await fromProxy(t, '203.0.113.2')).statusCode, 200);
      assert.equal((await fromProxy(t, '203.0.113.3')).statusCode, 429);
    } finally {
      await t.close();
    }
  });
});
