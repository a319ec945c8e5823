import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ManualClock } from '../../src/infra/clock.js';
import { MemoryCounterStore, RateLimiter, RedisCounterStore, type CounterStore } from '../../src/infra/http/index.js';

/**
 * Reservations of src/infra/http/rate-limiter.ts (limits that count only failures): an attempt
 * is counted before it is checked and given back on success. A give-back belongs to the window
 * it was taken in: after a reset or the window's end it must not lower the new window's count.
 */
const MINUTE = 60_000;
const limit = { count: 3, periodSeconds: 60 };

describe('RateLimiter.reserve (memory counters)', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 0, 0, 10));
  const store = new MemoryCounterStore(clock);
  const limiter = new RateLimiter(store, clock);
  const count = async (key: string) => (await store.increment(key, MINUTE)).count - 1;

  it('counts every key up front and refuses past the limit with the 429', async () => {
    for (let i = 0; i < 3; i += 1) assert.equal((await limiter.reserve('t', ['ip:1', 'login:a'], limit)).allowed, true);
    const refused = await limiter.reserve('t', ['ip:1', 'login:b'], limit);
    assert.equal(refused.allowed, false);
    assert.equal(refused.allowed ? null : refused.error.headers['ratelimit-observed'], '4', 'the refused key keeps the count');
    assert.equal(await count('t:login:b'), 0, 'keys after the refused one are not counted');
  });

  it('gives the earlier keys back when a later key refuses', async () => {
    for (let i = 0; i < 3; i += 1) await limiter.reserve('u', ['ip:2', 'login:c'], limit);
    assert.equal((await limiter.reserve('u', ['ip:9', 'login:c'], limit)).allowed, false);
    assert.equal(await count('u:ip:9'), 0);
  });

  it('release gives back once, however often it is called', async () => {
    await limiter.reserve('v', ['ip:3'], limit);
    const reservation = await limiter.reserve('v', ['ip:3'], limit);
    assert.ok(reservation.allowed);
    await reservation.release();
    await reservation.release();
    assert.equal(await count('v:ip:3'), 1);
  });

  it('a release after a reset or after the window ended leaves the new window alone', async () => {
    const { window } = await store.increment('w:reset', MINUTE);
    await store.reset('w:reset');
    await store.increment('w:reset', MINUTE);
    await store.release('w:reset', window);
    assert.equal(await count('w:reset'), 1);

    const old = await store.increment('w:end', MINUTE);
    clock.advance(MINUTE);
    await store.increment('w:end', MINUTE);
    await store.release('w:end', old.window);
    assert.equal(await count('w:end'), 1);
  });

  it('no limit configured: always allowed, nothing counted', async () => {
    const reservation = await limiter.reserve('x', ['ip:4'], undefined);
    assert.equal(reservation.allowed, true);
    assert.equal(await count('x:ip:4'), 0);
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

describe('RedisCounterStore.release', { skip: redisUrl ? false : 'TEST_REDIS_URL is not set' }, () => {
  let redis: Redis;
  let store: CounterStore;
  const count = async (key: string) => (await store.increment(key, MINUTE)).count - 1;

  before(() => {
    redis = new Redis(redisUrl as string);
    store = new RedisCounterStore(redis, { now: () => Date.now() }, `basalt-test-${randomBytes(6).toString('hex')}:`);
  });
  after(() => store.close());

  it('gives back one count of the same window, never below zero', async () => {
    const first = await store.increment('a', MINUTE);
    await store.increment('a', MINUTE);
    await store.release('a', first.window);
    assert.equal(await count('a'), 1);
    await store.release('a', first.window);
    await store.release('a', first.window);
    assert.equal(await count('a'), 0);
  });

  it('leaves another window alone: one begun after a reset, or a key gone', async () => {
    const old = await store.increment('b', MINUTE);
    await store.reset('b');
    // A different period makes the new window end elsewhere, as a later window would.
    await store.increment('b', 2 * MINUTE);
    await store.release('b', old.window);
    assert.equal(await count('b'), 1);
    await store.release('missing', old.window);
    assert.equal(await count('missing'), 0);
  });
});
