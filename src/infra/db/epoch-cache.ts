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
 * Lookups kept in process while the cache epochs they depend on read as they did before the
 * lookup ran, and for `ttlMs` at most. Each write that could change such an answer bumps one
 * of those epochs alongside the change, so an entry never outlives it, in this process or
 * another. Epochs are read once per turn of the event loop (epochs.ts), so a hit costs about
 * nothing.
 */
export class EpochCache<V> {
  private readonly entries = new Map<string, { stamp: string; until: number; value: V }>();

  constructor(private readonly options: EpochCacheOptions) {}

  /**
   * The kept answer for `key`, or what `find` answers now. Only answers `keep` approves are
   * kept (a refusal or a miss is read again next time); every answer is returned.
   */
  async through(key: string, find: () => Promise<V>, keep: (value: V) => boolean): Promise<V> {
    const { db, epochs, clock } = this.options;
    let stamp = '';
    for (const name of epochs) stamp += `${String(await readEpoch(db, name))}:`;
    const now = clock.now();
    const entry = this.entries.get(key);
    if (entry && entry.stamp === stamp && entry.until > now) return entry.value;
    // The epochs were read before `find`: a change committed in between leaves an entry
    // that the next read of the epochs already refuses.
    const value = await find();
    if (!keep(value)) {
      this.entries.delete(key);
      return value;
    }
    if (this.entries.size >= this.options.maxEntries) this.entries.clear();
    this.entries.set(key, { stamp, until: now + this.options.ttlMs, value });
    return value;
  }
}
