import type { Clock } from '../clock.js';
import type { Executor } from './database.js';
import { readEpoch, type EpochName } from './epochs.js';

export interface EpochCacheOptions {
  db: Executor;
  /** The counters whose writes can make an entry wrong (infra/db/epochs.ts). */
  epochs: readonly EpochName[];
  clock: Clock;
  ttlMs: number;
  maxEntries: number;
}

/**
 * Found rows kept in process while the cache epochs they depend on read as they did before
 * the rows were read, and for `ttlMs` at most. Each write that could change such a row bumps
 * one of those epochs in its transaction, so an entry never outlives a change, in this
 * process or another. Epochs are read once per turn of the event loop (epochs.ts), so a hit
 * costs about nothing; misses (`undefined`) are not kept.
 */
export class EpochCache<V> {
  private readonly entries = new Map<string, { stamp: string; until: number; value: V }>();

  constructor(private readonly options: EpochCacheOptions) {}

  async through(key: string, find: () => Promise<V | undefined>): Promise<V | undefined> {
    const { db, epochs, clock } = this.options;
    const values = await Promise.all(epochs.map((name) => readEpoch(db, name)));
    const stamp = values.join(':');
    const now = clock.now();
    const entry = this.entries.get(key);
    if (entry && entry.stamp === stamp && entry.until > now) return entry.value;
    // The epochs were read before the row: a change committed in between leaves an entry
    // that the next read of the epochs already refuses.
    const value = await find();
    if (value === undefined) {
      this.entries.delete(key);
      return undefined;
    }
    if (this.entries.size >= this.options.maxEntries) this.entries.clear();
    this.entries.set(key, { stamp, until: now + this.options.ttlMs, value });
    return value;
  }
}
