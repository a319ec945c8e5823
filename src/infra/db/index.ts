export { openDatabase } from './database.js';
export type { Database, DatabaseHandle, Dialect, Executor } from './database.js';
export { migrateToLatest } from './migrator.js';
export type { DB } from './schema.js';
export type { Flag, Millis } from './tables/core.js';
export { flag, isUniqueViolation } from './values.js';
export { CompiledOnce } from './compiled-once.js';
export type { Transact } from './write-batcher.js';
export { bumpEpoch, readEpoch, type EpochName } from './epochs.js';
