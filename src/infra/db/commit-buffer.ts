import type { Executor } from './database.js';

type Flush = (executor: Executor, values: unknown[]) => Promise<void>;

interface Gathered {
  flush: Flush;
  values: unknown[];
}

/** The buffers of the transactions `transact` runs, by their transaction object. */
const buffers = new WeakMap<object, Map<string, Gathered>>();

/**
 * Gathers `value` under `key` in the transaction `executor` is, to be written by `flush` with the
 * other values gathered there just before it commits: one row for what a shared commit's
 * requests each queue (alert mail: one outbox item per commit, not per alert). True when
 * gathered; false when `executor` is not a transaction of `transact` (a plain
 * `db.transaction()`, or no transaction), and the caller writes the value itself at once.
 * The flush runs inside the transaction, so what it writes commits or rolls back with the rest.
 */
export function gatherForCommit<T>(
  executor: Executor,
  key: string,
  value: T,
  flush: (executor: Executor, values: T[]) => Promise<void>,
): boolean {
  const buffer = buffers.get(executor);
  if (!buffer) return false;
  const gathered = buffer.get(key);
  if (gathered) gathered.values.push(value);
  else buffer.set(key, { flush: flush as Flush, values: [value] });
  return true;
}

/** Opens `trx`'s buffer: from now on `gatherForCommit` gathers for it. */
export function openCommitBuffer(trx: Executor): void {
  buffers.set(trx, new Map());
}

/**
 * Writes what was gathered in `trx` (in the order the keys were first used) and closes its
 * buffer; called after the transaction's work and before its COMMIT. A flush that throws fails
 * the transaction like any statement of its work.
 */
export async function flushCommitBuffer(trx: Executor): Promise<void> {
  const buffer = buffers.get(trx);
  buffers.delete(trx);
  if (!buffer) return;
  for (const { flush, values } of buffer.values()) await flush(trx, values);
}

/** Closes `trx`'s buffer without writing it (the transaction rolls back). */
export function dropCommitBuffer(trx: Executor): void {
  buffers.delete(trx);
}

/** `work` for a transaction of its own (`db.transaction().execute`), with a buffer written before its commit. */
export function withCommitBuffer<T, Trx extends Executor>(work: (trx: Trx) => Promise<T>): (trx: Trx) => Promise<T> {
  return async (trx) => {
    openCommitBuffer(trx);
    try {
      const value = await work(trx);
      await flushCommitBuffer(trx);
      return value;
    } finally {
      dropCommitBuffer(trx);
    }
  };
}
