import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Database, Dialect, Executor } from '../db/index.js';

export type JobHandler = (payload: unknown, context: JobContext) => Promise<void>;

export interface JobContext {
  readonly jobId: number;
  readonly attempt: number;
  readonly log: FastifyBaseLogger;
  /** Extends this job's lease; long jobs call it between steps so no other worker claims them. */
  heartbeat(): Promise<void>;
}

interface ClaimedJob {
  id: number;
  kind: string;
  payload: string;
  attempts: number;
}

const LEASE_MS = 60_000;
const MAX_ATTEMPTS = 5;

/**
 * Background work as rows: any number of processes run the loop, each claims one due row
 * at a time (SKIP LOCKED on PostgreSQL; SQLite serialises writers), and a crashed worker's
 * lease runs out so another picks the job up again.
 */
export class JobQueue {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly workerId = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;

  constructor(
    private readonly db: Database,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  register(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  async enqueue(executor: Executor, kind: string, payload: unknown, runAt?: number): Promise<number> {
    const now = this.clock.now();
    const row = await executor
      .insertInto('background_jobs')
      .values({ kind, payload: JSON.stringify(payload), run_at: runAt ?? now, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    this.poke();
    return row.id;
  }

  /** Whether a job of this kind is queued or running (other than `exceptId`), read with `executor`. */
  async hasPending(executor: Executor, kind: string, exceptId = 0): Promise<boolean> {
    const row = await executor
      .selectFrom('background_jobs')
      .select('id')
      .where('kind', '=', kind)
      .where('state', 'in', ['queued', 'running'])
      .where('id', '!=', exceptId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** How many jobs wait or run now, for the administrator's system page. */
  async pendingCount(): Promise<{ queued: number; running: number }> {
    const rows = await this.db
      .selectFrom('background_jobs')
      .select(['state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('state', 'in', ['queued', 'running'])
      .groupBy('state')
      .execute();
    const count = (state: string) => Number(rows.find((row) => row.state === state)?.n ?? 0);
    return { queued: count('queued'), running: count('running') };
  }

  /** Jobs waiting (`queued`, `running`) and given up (`failed`) per kind, for `/-/metrics`. */
  async countsByKind(): Promise<Array<{ kind: string; state: string; n: number }>> {
    const rows = await this.db
      .selectFrom('background_jobs')
      .select(['kind', 'state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy(['kind', 'state'])
      .execute();
    return rows.map((row) => ({ kind: row.kind, state: row.state, n: Number(row.n) }));
  }

  /**
   * Enqueues a job of `kind` unless one is queued or running (other than `exceptId`, the job
   * scheduling its own next run); true when it enqueued. Self-rescheduling jobs keep one pending so.
   */
  async enqueueUnlessPending(executor: Executor, kind: string, runAt: number, exceptId = 0): Promise<boolean> {
    if (await this.hasPending(executor, kind, exceptId)) return false;
    await this.enqueue(executor, kind, {}, runAt);
    return true;
  }

  start(intervalMs = 500): void {
    this.stopped = false;
    this.schedule(0, intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Runs due jobs until none is left; tests call it instead of waiting for the loop. */
  async drain(limit = 1000): Promise<number> {
    let done = 0;
    while (done < limit && (await this.runOne())) done += 1;
    return done;
  }

  private poke(): void {
    if (!this.stopped && this.timer && !this.running) {
      clearTimeout(this.timer);
      this.schedule(0, 500);
    }
  }

  private schedule(delay: number, intervalMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.drain(50)
        .then(() => undefined)
        .catch((error: unknown) => this.log.error({ err: error }, 'job loop failed'))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(intervalMs, intervalMs);
        });
    }, delay);
    this.timer.unref();
  }

  private async claim(): Promise<ClaimedJob | null> {
    const now = this.clock.now();
    const lock = this.dialect === 'postgres' ? sql`for update skip locked` : sql``;
    const result = await sql<ClaimedJob>`
      update background_jobs
         set state = 'running', locked_by = ${this.workerId}, locked_until = ${now + LEASE_MS},
             attempts = attempts + 1, updated_at = ${now}
       where id = (
         select id from background_jobs
          where (state = 'queued' and run_at <= ${now}) or (state = 'running' and locked_until < ${now})
          order by run_at, id limit 1 ${lock})
      returning id, kind, payload, attempts`.execute(this.db);
    return result.rows[0] ?? null;
  }

  private async runOne(): Promise<boolean> {
    const job = await this.claim();
    if (!job) return false;
    const handler = this.handlers.get(job.kind);
    const log = this.log.child({ job: job.id, kind: job.kind, attempt: job.attempts });
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(JSON.parse(job.payload), {
        jobId: job.id,
        attempt: job.attempts,
        log,
        heartbeat: async () => {
          await this.db
            .updateTable('background_jobs')
            .set({ locked_until: this.clock.now() + LEASE_MS })
            .where('id', '=', job.id)
            .execute();
        },
      });
      await this.db.deleteFrom('background_jobs').where('id', '=', job.id).execute();
    } catch (error) {
      const failed = job.attempts >= MAX_ATTEMPTS;
      log.error({ err: error }, failed ? 'job failed for good' : 'job failed, will retry');
      await this.db
        .updateTable('background_jobs')
        .set({
          state: failed ? 'failed' : 'queued',
          locked_by: null,
          locked_until: null,
          last_error: String((error as Error).message ?? error).slice(0, 2000),
          run_at: this.clock.now() + 1000 * 2 ** job.attempts,
          updated_at: this.clock.now(),
        })
        .where('id', '=', job.id)
        .execute();
    }
    return true;
  }
}
