import type { Clock } from '../clock.js';

export interface VersionCacheOptions {
  /** The database's data version (DatabaseHandle.dataVersion); `null` disables caching for a call. */
  dataVersion: (scope?: object) => Promise<string | null>;
  clock: Clock;
  /**
   * An answer is also dropped after this long: some inputs change with time alone, without a
   * write (a membership reaching its expiry date).
   */
  ttlMs: number;
  /**
   * An answer past `ttlMs` whose version still holds is served once more while its successor
   * is computed, instead of every caller waiting for it: for answers that only time moves a
   * little (sparklines), never for ones whose age decides access.
   */
  refreshBehind?: boolean;
  maxEntries: number;
  /** Bound on the summed `size` of the kept values. */
  maxBytes: number;
}

interface Entry<T> {
  version: string;
  storedAt: number;
  value: T;
  size: number;
}

/**
 * Answers computed from the database, served again while no transaction has committed since
 * (any write, to any table, from any process, ends every entry). Made for expensive reads
 * that are asked for far more often than the data changes, such as event lists.
 *
 * The version is read before the answer is computed: an answer may then hold newer rows than
 * its version says, never older ones, and an entry is only served while the version it was
 * stored under is still the current one.
 */
export class VersionCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /** Computations in progress, so concurrent misses of one key share one. */
  private readonly pending = new Map<string, { version: string; promise: Promise<T> }>();
  private keptVersion: string | null = null;
  private bytes = 0;

  constructor(private readonly options: VersionCacheOptions) {}

  /**
   * The kept answer for `key`, or `compute()`'s (kept for the next caller). `scope` is the
   * request asking, when there is one: its calls may share one read of the version.
   */
  async through(key: string, compute: () => Promise<T>, sizeOf: (value: T) => number, scope?: object): Promise<T> {
    const version = await this.options.dataVersion(scope);
    if (version === null) return compute();
    if (version !== this.keptVersion) {
      // Entries of an older version can never be served again.
      this.entries.clear();
      this.bytes = 0;
      this.keptVersion = version;
    }
    const now = this.options.clock.now();
    const entry = this.entries.get(key);
    if (entry && entry.version === version && now - entry.storedAt < this.options.ttlMs) {
      // Most recently used last: eviction takes from the front.
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry.value;
    }
    // Aged out but still of this version: served while its successor is computed.
    const behind = entry && entry.version === version && this.options.refreshBehind ? entry : null;
    const inFlight = this.pending.get(key);
    if (inFlight && inFlight.version === version) return behind ? behind.value : inFlight.promise;
    const promise = this.computeAndStore(key, version, now, compute, sizeOf);
    if (!behind) return promise;
    // A failed refresh leaves the aged entry; the next caller tries again.
    promise.catch(() => undefined);
    return behind.value;
  }

  private async computeAndStore(
    key: string,
    version: string,
    now: number,
    compute: () => Promise<T>,
    sizeOf: (value: T) => number,
  ): Promise<T> {
    const promise = compute();
    this.pending.set(key, { version, promise });
    try {
      const value = await promise;
      this.store(key, { version, storedAt: now, value, size: sizeOf(value) });
      return value;
    } finally {
      if (this.pending.get(key)?.promise === promise) this.pending.delete(key);
    }
  }

  private store(key: string, entry: Entry<T>): void {
    // Stored only under the current version: a newer one may have been seen meanwhile.
    if (entry.version !== this.keptVersion || entry.size > this.options.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.size;
      this.entries.delete(key);
    }
    this.entries.set(key, entry);
    this.bytes += entry.size;
    for (const [oldest, value] of this.entries) {
      if (this.entries.size <= this.options.maxEntries && this.bytes <= this.options.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= value.size;
    }
  }
}
