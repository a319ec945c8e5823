import type { Redis } from 'ioredis';
import type { RateLimit } from '../../config/index.js';
import type { Clock } from '../clock.js';
import { TooManyRequestsError } from '../errors/index.js';

export interface Hit {
  readonly observed: number;
  readonly remaining: number;
  /** Epoch ms when the current window ends. */
  readonly resetAt: number;
  readonly allowed: boolean;
}

export interface Count {
  readonly count: number;
  /** Epoch ms when the window ends. */
  readonly resetAt: number;
  /** Names the window the count was taken in, for `release`. */
  readonly window: number;
}

/** Fixed-window counters: in memory for one process, in Redis when processes share limits. */
export interface CounterStore {
  /** Adds one to `key` in a window of `periodMs`; returns the count and when the window ends. */
  increment(key: string, periodMs: number): Promise<Count>;
  /**
   * Takes back one count that `increment` gave in `window`, never below zero. A window that
   * has ended or was reset owes nothing, so a late release cannot lower the next window's count.
   */
  release(key: string, window: number): Promise<void>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

export class MemoryCounterStore implements CounterStore {
  private readonly windows = new Map<string, { count: number; resetAt: number; id: number }>();
  private nextId = 1;
  private lastSweep = 0;

  constructor(private readonly clock: Clock) {}

  increment(key: string, periodMs: number): Promise<Count> {
    const now = this.clock.now();
    this.sweep(now);
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      // A fresh id, not the end time: a window reset and begun again ends at the same instant.
      window = { count: 0, resetAt: now - (now % periodMs) + periodMs, id: this.nextId++ };
      this.windows.set(key, window);
    }
    window.count += 1;
    return Promise.resolve({ count: window.count, resetAt: window.resetAt, window: window.id });
  }

  release(key: string, window: number): Promise<void> {
    const current = this.windows.get(key);
    if (current?.id === window && current.resetAt > this.clock.now() && current.count > 0) current.count -= 1;
    return Promise.resolve();
  }

  reset(key: string): Promise<void> {
    this.windows.delete(key);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.windows.clear();
    return Promise.resolve();
  }

  /** Drops ended windows at most once a second so the map stays bounded by live keys. */
  private sweep(now: number): void {
    if (now - this.lastSweep < 1000) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

// INCR and set the expiry on the first hit, atomically, so every process sees one window. The
// window is named by when it ends on Redis's own clock (TIME + PTTL), for RELEASE_SCRIPT.
const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
local now = redis.call('TIME')
return {count, ttl, now[1] * 1000 + math.floor(now[2] / 1000) + ttl}`;

// DECR only while the window the count was taken in lasts, and never below zero. Successive
// windows of a key end at least a period (>= 1 s) apart; the 100 ms slack covers the readings of
// TIME and PTTL (only a window begun again within it after a reset could take the give-back, one
// count). PEXPIRETIME would be exact but needs Redis 7; TIME before a write needs Redis 5.
const RELEASE_SCRIPT = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
local now = redis.call('TIME')
local ends = now[1] * 1000 + math.floor(now[2] / 1000) + ttl
if math.abs(ends - tonumber(ARGV[1])) > 100 then return 0 end
if tonumber(redis.call('GET', KEYS[1])) <= 0 then return 0 end
return redis.call('DECR', KEYS[1])`;

export class RedisCounterStore implements CounterStore {
  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    private readonly prefix = 'basalt:rl:',
  ) {}

  async increment(key: string, periodMs: number): Promise<Count> {
    const [count, ttl, window] = (await this.redis.eval(INCREMENT_SCRIPT, 1, this.prefix + key, String(periodMs))) as [
      number,
      number,
      number,
    ];
    return { count, resetAt: this.clock.now() + (ttl > 0 ? ttl : periodMs), window };
  }

  async release(key: string, window: number): Promise<void> {
    await this.redis.eval(RELEASE_SCRIPT, 1, this.prefix + key, String(window));
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}

/**
 * An attempt counted in advance under each of its keys (see `RateLimiter.reserve`): allowed,
 * with `release` to give the counts back, or refused with the 429 to throw.
 */
export type Reservation =
  { readonly allowed: true; release(): Promise<void> } | { readonly allowed: false; readonly error: TooManyRequestsError };

export class RateLimiter {
  /** Told each refusal's limit name (buildApp counts them on `/-/metrics`). */
  onRefused: (name: string) => void = () => undefined;

  constructor(
    readonly store: CounterStore,
    private readonly clock: Clock,
  ) {}

  async hit(name: string, key: string, limit: RateLimit): Promise<Hit> {
    return (await this.count(name, key, limit)).hit;
  }

  /** Counts a hit and throws the 429 of reference §3.6 when the limit is passed. */
  async enforce(name: string, key: string, limit: RateLimit | undefined): Promise<void> {
    if (!limit) return;
    const hit = await this.hit(name, key, limit);
    if (!hit.allowed) throw this.tooMany(name, limit, hit);
  }

  /**
   * For limits that count only failures (sign-in, device codes): counts the attempt under every
   * key before the caller's slow check, so a burst of concurrent guesses cannot all pass a check
   * made before any of them was counted; the caller releases the reservation when the attempt
   * succeeds. Past the limit on a key the attempt is refused: that key keeps the count, as
   * `enforce` does (the 429's headers show it), and the keys counted before it get theirs back.
   */
  async reserve(name: string, keys: readonly string[], limit: RateLimit | undefined): Promise<Reservation> {
    const taken: { key: string; window: number }[] = [];
    const release = async (): Promise<void> => {
      // splice: a second release must not take back counts twice.
      for (const { key, window } of taken.splice(0)) await this.store.release(key, window);
    };
    if (!limit) return { allowed: true, release };
    for (const key of keys) {
      const { hit, window } = await this.count(name, key, limit);
      if (!hit.allowed) {
        await release();
        return { allowed: false, error: this.tooMany(name, limit, hit) };
      }
      taken.push({ key: `${name}:${key}`, window });
    }
    return { allowed: true, release };
  }

  tooMany(name: string, limit: RateLimit, hit: Hit): TooManyRequestsError {
    this.onRefused(name);
    const now = this.clock.now();
    const retryAfter = Math.max(1, Math.ceil((hit.resetAt - now) / 1000));
    return new TooManyRequestsError(retryAfter, {
      'ratelimit-name': `throttle_${name}`,
      // RateLimit-Limit is the limit normalised to a 60-second window, rounded up.
      'ratelimit-limit': String(Math.ceil((limit.count * 60) / limit.periodSeconds)),
      'ratelimit-observed': String(hit.observed),
      'ratelimit-remaining': String(hit.remaining),
      'ratelimit-reset': String(Math.ceil(hit.resetAt / 1000)),
      'ratelimit-resettime': new Date(hit.resetAt).toUTCString(),
    });
  }

  private async count(name: string, key: string, limit: RateLimit): Promise<{ hit: Hit; window: number }> {
    const { count, resetAt, window } = await this.store.increment(`${name}:${key}`, limit.periodSeconds * 1000);
    return { hit: { observed: count, remaining: Math.max(0, limit.count - count), resetAt, allowed: count <= limit.count }, window };
  }
}
