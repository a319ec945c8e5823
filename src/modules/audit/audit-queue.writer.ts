import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToRequests } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Dialect, Executor } from '../../infra/db/index.js';
import { LoadWindow, type RequestLoad } from '../../infra/load.js';
import { AuditQueueRepository } from './audit-queue.repository.js';
import type { AuditEntry } from '../../infra/audit.js';
import type { AuditRepository, AuditRowValues } from './audit.repository.js';

/** How often the writer looks at the load and the queue. */
const TICK_MS = 1_000;
/**
 * How long this process's queued events may wait while requests keep it busy; after that it
 * writes a small batch each tick, load or not. Also how often it looks for rows it did not queue
 * (another process's, or left by a stop before they were written).
 */
const MAX_WAIT_MS = 30_000;
/** Queue rows (each a commit's events, up to 32) per transaction when a read asks for everything. */
const READ_BATCH = 16;
/**
 * Queue rows per transaction when the process is quiet: about 1.5 ms of writing, so a burst that
 * begins meanwhile waits at most that long. With 16 rows (6 ms) and a stop after 20 requests, the
 * writing in progress when a burst began took 50–150 ms of its first moments (docs/performance.md "Audit").
 */
const QUIET_BATCH = 4;
/** Requests begun during a quiet-time write that make it stop until the next tick: the first one. */
const QUIET_YIELD_REQUESTS = 1;
/** Queue rows per transaction, one transaction a tick, while requests keep the process busy. */
const BUSY_BATCH = 8;
/** Undecodable rows remembered (and skipped) per process; a bound on what corruption can cost in memory. */
const SKIPPED_MAX = 1_000;

export interface AuditQueueWriterOptions {
  db: Database;
  dialect: Dialect;
  events: AuditRepository;
  load: RequestLoad;
  log: FastifyBaseLogger;
}

/**
 * Moves queued audit events (a shared commit's, one row each: src/infra/db/migrations/0020) into
 * `audit_events`. A commit pays for one small row instead of a row and two index entries per
 * event; the events are written later, in large batches, when requests leave the process time
 * (docs/performance.md "Audit"). Each batch is taken out of the queue in the transaction that
 * writes its events, so an event is written once whatever crashes. Every read of the audit
 * trail calls `writeAll` first, so it shows every committed event however busy the process was.
 */
export class AuditQueueWriter {
  private readonly queue: AuditQueueRepository;
  private readonly window: LoadWindow;
  /** When this process queued its oldest row not yet written (performance.now), or null. */
  private waitingSince: number | null = null;
  /** Rows this process has queued: a batch that saw none queued meanwhile may clear `waitingSince`. */
  private queuedCount = 0;
  private lastLook = Number.NEGATIVE_INFINITY;
  private readonly skipped = new Set<number>();
  /** The write in progress: a second one waits for it, so two never race within a process. */
  private writing: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  /** A tick in progress: the next one is skipped rather than queued behind it. */
  private ticking = false;

  constructor(private readonly options: AuditQueueWriterOptions) {
    this.queue = new AuditQueueRepository(options.db);
    this.window = new LoadWindow(options.load);
  }

  /** The commit buffer's flush: a commit's events as one queue row, in its transaction. */
  readonly enqueue = async (executor: Executor, entries: AuditEntry[]): Promise<void> => {
    await AuditQueueRepository.enqueue(executor, entries);
    this.queuedCount += 1;
    this.waitingSince ??= performance.now();
  };

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = true;
      void this.tick().finally(() => (this.ticking = false));
    }, TICK_MS);
    this.timer.unref();
  }

  /** Stops the ticks and writes what this process queued (a crash leaves it to the next writer's look). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.waitingSince !== null) {
      await this.writeAll().catch((error: unknown) =>
        this.options.log.error({ err: error }, 'writing queued audit events at stop failed; they stay queued'),
      );
    }
    await this.writing.catch(() => undefined);
  }

  /** Writes every queued event, by any process: what a read of the trail needs first. */
  writeAll(): Promise<number> {
    return this.exclusively(() => this.writeBatches(Number.POSITIVE_INFINITY, READ_BATCH));
  }

  /**
   * Batches until the queue is empty, or until `yieldAfter` requests have begun since the first
   * (the background writer's quiet-time work gives way to a burst that starts meanwhile).
   */
  private async writeBatches(yieldAfter: number, rows: number): Promise<number> {
    const requestsAtStart = this.options.load.requests;
    let written = 0;
    for (;;) {
      const batch = await this.writeBatch(rows);
      written += batch.events;
      if (batch.rows < rows || this.options.load.since(requestsAtStart) >= yieldAfter) return written;
      // Requests waiting on the connection go between two batches.
      await yieldToRequests();
    }
  }

  /** Rows queued, for `/-/metrics`. */
  queuedRows(): Promise<number> {
    return this.queue.count();
  }

  /**
   * Once a second: quiet, the process writes what it queued; busy, it leaves its events queued
   * for up to MAX_WAIT_MS and then writes BUSY_BATCH rows a tick. Every MAX_WAIT_MS it looks for
   * rows it did not queue.
   */
  private async tick(): Promise<void> {
    const now = performance.now();
    const busy = this.window.busySinceLastAsked();
    const look = now - this.lastLook >= MAX_WAIT_MS;
    const mine = this.waitingSince !== null && (!busy || now - this.waitingSince >= MAX_WAIT_MS);
    if (!look && !mine) return;
    try {
      if (look) {
        this.lastLook = now;
        if (!mine && !(await this.queue.any())) return;
      }
      if (busy) await this.exclusively(() => this.writeBatch(BUSY_BATCH));
      else await this.exclusively(() => this.writeBatches(QUIET_YIELD_REQUESTS, QUIET_BATCH));
    } catch (error) {
      this.options.log.error({ err: error }, 'writing queued audit events failed; they stay queued');
    }
  }

  /** One transaction: up to `limit` queue rows out, their events into `audit_events`. */
  private async writeBatch(limit: number): Promise<{ rows: number; events: number }> {
    const queuedBefore = this.queuedCount;
    const taken = await this.options.db.transaction().execute(async (trx) => {
      const rows = await this.queue.on(trx).take(this.options.dialect, limit, this.skipped);
      const events: AuditRowValues[] = [];
      for (const row of rows) {
        if (row.rows) {
          events.push(...row.rows);
          continue;
        }
        // Not what this code writes (a damaged or foreign row): kept where it is for an operator.
        await this.queue.on(trx).restore(row);
        if (this.skipped.size < SKIPPED_MAX) this.skipped.add(row.id);
        this.options.log.error(
          { auditQueueRowId: row.id, length: row.events.length },
          'a queued audit row does not decode; it is left in audit_event_queue',
        );
      }
      await this.options.events.on(trx).insertMany(events);
      return { rows: rows.length, events: events.length };
    });
    // A batch that comes back short has written everything queued before it began.
    if (taken.rows < limit && this.queuedCount === queuedBefore) this.waitingSince = null;
    return taken;
  }

  private exclusively<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writing.catch(() => undefined).then(work);
    this.writing = run;
    return run;
  }
}
