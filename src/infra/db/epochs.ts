import { CompiledOnce } from './compiled-once.js';
import type { Executor } from './database.js';

/**
 * Cache epochs: a counter in the shared database per family of cached lookups. Every write
 * that could make a cached answer wrong bumps the counter in its own transaction: modules
 * declare which tables feed which epoch, and the database layer bumps it on their writes
 * (epoch-bumps.ts). A cached answer is used only while the counter still reads what it read
 * when the answer was cached. Reading one counter by key costs a fraction of the lookup it saves, and the rule
 * holds across processes: a revocation through one is seen by every other at once.
 */
export type EpochName =
  /** Tokens, sessions and the users they belong to (OAuth token lookups). */
  | 'credentials'
  /** What a project id or path resolves to: paths, deletion, namespace, visibility. */
  | 'projects'
  /** Error tracking settings and client keys (collector grants). */
  | 'error-tracking'
  /** Alert integrations and alert settings (receiver targets). */
  | 'alerts';

const READ = new CompiledOnce(1, (db, name: string) => db.selectFrom('cache_epochs').select('value').where('name', '=', name));
const BUMP = new CompiledOnce(1, (db, name: string) =>
  db
    .insertInto('cache_epochs')
    .values({ name, value: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ value: eb('cache_epochs.value', '+', 1) }))),
);

/**
 * Counters read during the current turn of the event loop, by database (its query adapter,
 * shared with its transactions) and name. Requests handled in one turn arrived together and
 * share one read: none of them can have been answered after a revocation that the read has
 * not seen, since a revocation is answered only after its commit, in a later turn. Under
 * load this turns one read per request into one per turn.
 */
const readThisTurn = new WeakMap<object, Map<EpochName, Promise<number>>>();

async function readNow(db: Executor, name: EpochName): Promise<number> {
  return Number((await READ.first(db, name))?.value ?? 0);
}

export function readEpoch(db: Executor, name: EpochName): Promise<number> {
  // Inside a transaction the read is the transaction's own (and makes the transaction's next
  // write bump again, epoch-bumps.ts).
  if (db.isTransaction) return readNow(db, name);
  const adapter = db.getExecutor().adapter;
  let turn = readThisTurn.get(adapter);
  if (!turn) {
    turn = new Map();
    readThisTurn.set(adapter, turn);
    setImmediate(() => readThisTurn.delete(adapter));
  }
  let value = turn.get(name);
  if (!value) {
    value = readNow(db, name);
    turn.set(name, value);
  }
  return value;
}

/** Reads later in this turn go to the database (and wait there for the bump's commit). */
export function forgetTurnRead(adapter: object, name: EpochName): void {
  readThisTurn.get(adapter)?.delete(name);
}

/**
 * Moves a counter now, whatever was written. Writes need not call it: the tables each epoch is
 * declared with bump it themselves (epoch-bumps.ts); this serves tests and manual repairs.
 */
export async function bumpEpoch(db: Executor, name: EpochName): Promise<void> {
  await BUMP.rows(db, name);
  forgetTurnRead(db.getExecutor().adapter, name);
}
