import { coreMigration } from './0001_core.js';
import type { MigrationFactory } from './helpers.js';

/**
 * Every migration, by name; names sort in the order they run. Numbers are reserved per
 * area so work on different areas never collides: 0001 core, 0002 auth, 0003 oauth,
 * 0004 alerts, 0005 error tracking, 0006 notifications and events, 0007 git.
 * A shipped migration is never edited; a change is a new file.
 */
export const migrations: Record<string, MigrationFactory> = {
  '0001_core': coreMigration,
};
