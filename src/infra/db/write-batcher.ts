import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.js';
import { dropCommitBuffer, flushCommitBuffer, openCommitBuffer, withCommitBuffer } from './commit-buffer.js';

/** Runs `work` in a transaction that is committed before the returned promise settles. */
export type Transact = <T>(work: (trx: Transaction<DB>) => Promise<T>) => Promise<T>;

interface Job {
  work: (trx: Transaction<DB>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Jobs of one commit at most: bounds how long readers wait behind a batch. */
const MAX_BATCH = 32;

/**
 * Group commit for SQLite. A commit costs more than the statements of a small write (a
 * WAL frame per changed page, file locks, and now and then a checkpoint with fsync), and
 * requests arriving together mostly change the same pages. Write transactions that arrive
 * in the same turn of the event loop therefore run one after the other inside one
 * transaction, and every job settles only after the shared COMMIT, so nothing is
 * acknowledged before it is durable. Failures are rare (a retried event, a lost refresh
 * race): when a job throws, the batch is rolled back and each of its jobs runs again in a
 * transaction of its own, so a failure stays the failing job's. Jobs therefore touch only
 * the database they are given.
 * Serialising them costs nothing SQLite did not already do (one writer at a time).
 * PostgreSQL runs concurrent transactions on several connections and does not use this.
 */
export class WriteBatcher {
  private queue: Job[] = [];
  private scheduled = false;
  /** The batch being written, if any: what quiesce waits for. */
  private flushing: Promise<void> | null = null;
  private held = false;

  constructor(private readonly db: Kysely<DB>) {}

  readonly transact: Transact = <T>(work: (trx: Transaction<DB>) => Promise<T>): Promise<T> => {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  };

  /**
   * Runs `task` once the batch being written (if any) has committed, with no write of this
   * connection begun until it settles; jobs arriving meanwhile queue and run after it.
   */
  readonly quiesce = async (task: () => Promise<void>): Promise<void> => {
    this.held = true;
    try {
      while (this.flushing) await this.flushing;
      await task();
    } finally {
      this.held = false;
      if (this.queue.length > 0) this.schedule();
    }
  };

  private schedule(): void {
    if (this.scheduled || this.held) return;
    this.scheduled = true;
    setImmediate(() => {
      // A hold that began after this turn was scheduled: its end schedules the queue again.
      if (this.held) {
        this.scheduled = false;
        return;
      }
      const flushing = this.flush().finally(() => {
        if (this.flushing === flushing) this.flushing = null;
      });
      this.flushing = flushing;
    });
  }

  private async flush(): Promise<void> {
    const jobs = this.queue.splice(0, MAX_BATCH);
    try {
      const settled = jobs.length > 1 && (await this.together(jobs));
      // Alone, or a job of the batch failed (the batch was rolled back): each job in its own
      // transaction, so one job's failure is its own.
      if (!settled) for (const job of jobs) await this.alone(job);
    } catch (error) {
      // The transaction could not even begin or end (the database is locked or gone).
      for (const job of jobs) job.reject(error);
    } finally {
      this.scheduled = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  /** Every job in one transaction and settled; false (nothing written) when one of them throws. */
  private async together(jobs: readonly Job[]): Promise<boolean> {
    const trx = await this.db.startTransaction().execute();
    const values: unknown[] = [];
    // What the jobs gather for the commit (infra/db/commit-buffer.ts) is written once for all.
    openCommitBuffer(trx);
    try {
      for (const job of jobs) values.push(await job.work(trx));
      await flushCommitBuffer(trx);
    } catch {
      dropCommitBuffer(trx);
      await trx.rollback().execute();
      return false;
    }
    try {
      await trx.commit().execute();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return true;
    }
    jobs.forEach((job, i) => job.resolve(values[i]));
    return true;
  }

  private async alone(job: Job): Promise<void> {
    try {
      job.resolve(await this.db.transaction().execute(withCommitBuffer(job.work)));
    } catch (error) {
      job.reject(error);
    }
  }
}
