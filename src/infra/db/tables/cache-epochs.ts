/** Counters bumped by every write that invalidates an in-process cache (infra/db/epochs.ts). */
export interface CacheEpochsTable {
  name: string;
  value: number;
}

export interface CacheEpochTables {
  cache_epochs: CacheEpochsTable;
}
