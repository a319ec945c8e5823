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

/** Fixed-window counters: in memory for one process, in Redis when processes share limits. */
export interface CounterStore {
  /** Adds one to `key` in a window of `periodMs`; returns the count and when the window ends. */
  increment(key: string, periodMs: number): Promise<{ count: number; resetAt: number }>;
  /** Reads without counting (for checks that count only failures). */
  peek(key: string): Promise<number>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

export class MemoryCounterStore implements CounterStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = 0;

  constructor(private readonly clock: Clock) {}

  increment(key: string, periodMs: number): Promise<{ count: number; resetAt: number }> {
    const now = this.clock.now();
    this.sweep(now);
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now - (now % periodMs) + periodMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return Promise.resolve({ count: window.count, resetAt: window.resetAt });
  }

  peek(key: string): Promise<number> {
    const window = this.windows.get(key);
    return Promise.resolve(window && window.resetAt > this.clock.now() ? window.count : 0);
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

// INCR and set the expiry on the first hit, atomically, so every process sees one window.
const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
return {count, ttl}`;

export class RedisCounterStore implements CounterStore {
  constructor(
    private readonly redis: Redis,
    private readonly clock: Clock,
    private readonly prefix = 'basalt:rl:',
  ) {}

  async increment(key: string, periodMs: number): Promise<{ count: number; resetAt: number }> {
    const [count, ttl] = (await this.redis.eval(INCREMENT_SCRIPT, 1, this.prefix + key, String(periodMs))) as [number, number];
    return { count, resetAt: this.clock.now() + (ttl > 0 ? ttl : periodMs) };
  }

  async peek(key: string): Promise<number> {
    return Number((await this.redis.get(this.prefix + key)) ?? 0);
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}

export class RateLimiter {
  constructor(
    readonly store: CounterStore,
    private readonly clock: Clock,
  ) {}

  async hit(name: string, key: string, limit: RateLimit): Promise<Hit> {
    const { count, resetAt } = await this.store.increment(`${name}:${key}`, limit.periodSeconds * 1000);
    return { observed: count, remaining: Math.max(0, limit.count - count), resetAt, allowed: count <= limit.count };
  }

  /** Counts a hit and throws the 429 of reference §3.6 when the limit is passed. */
  async enforce(name: string, key: string, limit: RateLimit | undefined): Promise<void> {
    if (!limit) return;
    const hit = await this.hit(name, key, limit);
    if (!hit.allowed) throw this.tooMany(name, limit, hit);
  }

  tooMany(name: string, limit: RateLimit, hit: Hit): TooManyRequestsError {
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
}
