import { CompiledOnce } from './compiled-once.js';
import type { Executor } from './database.js';

/**
 * Cache epochs: a counter in the shared database per family of cached lookups. Every write
 * that could make a cached answer wrong bumps the counter in its own transaction; a cached
 * answer is used only while the counter still reads what it read when the answer was
 * cached. Reading one counter by key costs a fraction of the lookup it saves, and the rule
 * holds across processes: a revocation through one is seen by every other at once.
 */
export type EpochName = 'credentials';

const READ = new CompiledOnce(1, (db, name: string) => db.selectFrom('cache_epochs').select('value').where('name', '=', name));
const BUMP = new CompiledOnce(1, (db, name: string) =>
  db
    .insertInto('cache_epochs')
    .values({ name, value: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb('cache_epochs.value', '+', 1) }))),
);

export async function readEpoch(db: Executor, name: EpochName): Promise<number> {
  return Number((await READ.first(db, name))?.value ?? 0);
}

export async function bumpEpoch(db: Executor, name: EpochName): Promise<void> {
  await BUMP.rows(db, name);
}
