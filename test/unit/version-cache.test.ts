import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/infra/clock.js';
import { VersionCache } from '../../src/infra/db/version-cache.js';

/** A cache over a version the test sets, counting how often answers are computed. */
function setup(limits: { ttlMs?: number; maxEntries?: number; maxBytes?: number; refreshBehind?: boolean } = {}) {
  const clock = new ManualClock();
  const state = { version: 'v1' as string | null, computed: 0 };
  const cache = new VersionCache<string>({
    dataVersion: async () => state.version,
    clock,
    ttlMs: limits.ttlMs ?? 10_000,
    refreshBehind: limits.refreshBehind ?? false,
    maxEntries: limits.maxEntries ?? 100,
    maxBytes: limits.maxBytes ?? 1_000_000,
  });
  const get = (key: string, value = `${key}@${String(state.version)}`) =>
    cache.through(
      key,
      async () => {
        state.computed += 1;
        return value;
      },
      (v) => v.length,
    );
  return { clock, state, cache, get };
}

describe('VersionCache', () => {
  it('answers again while the version holds, computes anew once it moves', async () => {
    const { state, get } = setup();
    assert.equal(await get('a'), 'a@v1');
    assert.equal(await get('a'), 'a@v1');
    assert.equal(state.computed, 1);
    state.version = 'v2';
    assert.equal(await get('a'), 'a@v2');
    assert.equal(state.computed, 2);
  });

  it('keeps nothing when the version cannot be told', async () => {
    const { state, get } = setup();
    state.version = null;
    await get('a');
    await get('a');
    assert.equal(state.computed, 2);
  });

  it('drops an answer after its time to live even if nothing was written', async () => {
    const { clock, state, get } = setup({ ttlMs: 1000 });
    await get('a');
    clock.advance(999);
    await get('a');
    assert.equal(state.computed, 1);
    clock.advance(1);
    await get('a');
    assert.equal(state.computed, 2);
  });

  it('concurrent misses of one key compute once', async () => {
    const { state, get } = setup();
    const answers = await Promise.all([get('a'), get('a'), get('a')]);
    assert.deepEqual(answers, ['a@v1', 'a@v1', 'a@v1']);
    assert.equal(state.computed, 1);
  });

  it('evicts the least recently used beyond its entry and byte bounds', async () => {
    const { state, get } = setup({ maxEntries: 2 });
    await get('a');
    await get('b');
    await get('a'); // a is now the most recent
    await get('c'); // evicts b
    assert.equal(state.computed, 3);
    await get('a');
    assert.equal(state.computed, 3, 'a was kept');
    await get('b');
    assert.equal(state.computed, 4, 'b was evicted');

    const small = setup({ maxBytes: 10 });
    await small.get('x', '123456');
    await small.get('y', '123456'); // 12 bytes in all: x goes
    await small.get('y', '123456');
    await small.get('x', '123456');
    assert.equal(small.state.computed, 3);
    await small.get('z', 'more than ten bytes'); // never kept
    await small.get('z', 'more than ten bytes');
    assert.equal(small.state.computed, 5);
  });

  it('refreshBehind: an aged answer of the current version is served while its successor is computed; a new version never is', async () => {
    const { clock, state, get } = setup({ ttlMs: 1000, refreshBehind: true });
    assert.equal(await get('a', 'first'), 'first');
    clock.advance(1500);
    // Aged out: the kept answer comes back at once and the next one is computed behind it.
    assert.equal(await get('a', 'second'), 'first');
    assert.equal(state.computed, 2);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(await get('a', 'third'), 'second', 'the successor is served once computed');
    assert.equal(state.computed, 2);
    state.version = 'v2';
    assert.equal(await get('a', 'fourth'), 'fourth', 'another version waits for its own answer');
  });

  it('without refreshBehind an aged answer is computed again before it is served', async () => {
    const { clock, get } = setup({ ttlMs: 1000 });
    assert.equal(await get('a', 'first'), 'first');
    clock.advance(1500);
    assert.equal(await get('a', 'second'), 'second');
  });
});
