import { randomUUID } from 'node:crypto';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { sql, type Updateable } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { CompiledOnce, gatherForCommit, type Database, type Dialect, type Executor } from '../db/index.js';
import type { OutboxTable } from '../db/tables/outbox.js';
import { BUSY_REQUESTS_PER_SECOND, BUSY_UTILIZATION, RequestLoad } from '../load.js';

export type SendResult = { ok: true } | { ok: false; error: string; permanent?: boolean; retryAfterMs?: number };

export interface OutboxItem {
  readonly id: number;
  readonly kind: string;
  readonly messageId: string;
  readonly payload: unknown;
  /** Tries so far, this one included. */
  readonly attempts: number;
  readonly createdAt: number;
}

export interface OutboxKind {
  send(item: OutboxItem): Promise<SendResult>;
  /** Tries before the item goes dead (default 10). */
  maxAttempts?: number;
  /** Wait before try `attempt + 1` after try `attempt` failed; default exponential from 30 s, capped at 6 h. */
  backoffMs?(attempt: number): number;
  /** Called once when an item goes dead or is sent, in its own transaction. */
  onSettled?(item: OutboxItem, outcome: 'sent' | 'dead', executor: Executor): Promise<void>;
}

export interface EnqueueOptions {
  /** Unique per item; a second enqueue with the same id is ignored. Default: a random id. */
  messageId?: string;
  /** Not before this time (epoch ms). */
  runAt?: number;
}

export interface OutboxOptions {
  /** Items sent at once by one process. */
  concurrency?: number;
  /** How long a claimed item is held before another process may take it over (renewed while it is in flight). */
  leaseMs?: number;
  /** How often the loop looks for due items when nothing pokes it. */
  pollMs?: number;
  /** Parts sent each poll while requests keep the process busy (OUTBOX_BUSY_PER_SECOND at the 1 s poll). */
  busyBatch?: number;
  /** Sent items are deleted this long after they were sent. */
  retentionMs?: number;
  /** The host part of generated message ids. */
  host?: string;
  /** The process's request count (the HTTP layer's); a count of its own when left out. */
  load?: RequestLoad;
}

interface ClaimedRow {
  id: number | string;
  kind: string;
  message_id: string;
  payload: string;
  attempts: number | string;
  created_at: number | string;
}

export const DEFAULT_MAX_ATTEMPTS = 10;
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_CAP_MS = 6 * 3_600_000;

/** 30 s, 60 s, 120 s, … capped at 6 h, with up to 10 % jitter so retries of one outage spread out. */
export function defaultBackoffMs(attempt: number): number {
  const base = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + Math.random() * 0.1));
}

// Alert ingestion with mail writes one per request: built and compiled once (docs/perf-lab.md).
const INSERT_ITEM = new CompiledOnce(5, (db, kind: string, messageId: string, payload: string, runAt: number, now: number) =>
  db
    .insertInto('outbox')
    .values({
      kind,
      message_id: messageId,
      payload,
      next_attempt_at: runAt,
      last_error: null,
      lease_owner: null,
      lease_until: null,
      created_at: now,
      updated_at: now,
      settled_at: null,
    })
    .onConflict((oc) => oc.column('message_id').doNothing()),
);

/** The shortest gap whose requests tell whether the process is busy (IDLE_GAP_MS, below, is as long). */
const MIN_JUDGED_GAP_MS = 20;
/** The batch a busy process sends each poll unless told otherwise (OUTBOX_BUSY_PER_SECOND), in parts. */
const BUSY_BATCH = 8;
/** Items a drain sends while the process is not busy, before it looks again. */
const IDLE_CHUNK = 500;
/** Requests begun during such a drain that make it stop claiming. */
const IDLE_YIELD_REQUESTS = 20;
/** The gap between two such drains, long enough to see whether requests keep the loop busy. */
const IDLE_GAP_MS = 20;

function itemOf(row: ClaimedRow): OutboxItem {
  return {
    id: Number(row.id),
    kind: row.kind,
    messageId: row.message_id,
    payload: JSON.parse(row.payload) as unknown,
    attempts: Number(row.attempts),
    createdAt: Number(row.created_at),
  };
}

/** The work an item stands for: its parts (`enqueuePart`), or one. */
function weightOf(item: OutboxItem): number {
  const parts = (item.payload as { parts?: unknown } | null)?.parts;
  return Array.isArray(parts) ? Math.max(1, parts.length) : 1;
}

const errorText = (error: unknown) => String((error as Error)?.message ?? error).slice(0, 2000);

/**
 * The durable outbox: callers enqueue inside the transaction of the change that causes a message
 * (so a rolled-back change sends nothing and a committed one is never lost); a loop in each
 * process with RUN_JOBS claims due items in batches (FOR UPDATE SKIP LOCKED on PostgreSQL; SQLite
 * serialises writers), holds them under a lease (a crashed process's items are taken over when
 * it runs out), sends up to `concurrency` at once off the request path, and records the outcome:
 * sent, failed (retried after a backoff) or dead after the kind's maximum number of tries.
 */
export class Outbox {
  private readonly kinds = new Map<string, OutboxKind>();
  /** `enqueuePart`'s writer of a transaction's gathered parts, one per kind. */
  private readonly partFlushes = new Map<string, (executor: Executor, parts: unknown[]) => Promise<void>>();
  private readonly workerId = randomUUID();
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly busyBatch: number;
  private readonly retentionMs: number;
  private readonly host: string;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private poked = false;
  private pokePending = false;
  /** Where wake-ups go when another thread runs the loop (`forwardWakeUps`). */
  private forward: (() => void) | null = null;
  private lastPrune = 0;
  /** Items sent whose state is written with the next batch. */
  private readonly sentIds: number[] = [];
  /** The event loop's use and the requests counted when the last drain ended: the gap since then holds none of the outbox's own work. */
  private gapStart: { utilization: EventLoopUtilization; requests: number; at: number };
  /** Whether the last gap long enough to judge found the process busy. */
  private lastVerdict = false;
  /** Requests this process has begun, the measure of load that CPU contention cannot hide. */
  private readonly load: RequestLoad;
  /** A sequence for message ids within one millisecond of this process. */
  private idSequence = 0;

  constructor(
    private readonly db: Database,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    options: OutboxOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 32;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 1_000;
    this.busyBatch = options.busyBatch ?? BUSY_BATCH;
    this.retentionMs = options.retentionMs ?? 7 * 86_400_000;
    this.host = options.host ?? 'basalt.local';
    this.load = options.load ?? new RequestLoad();
    this.gapStart = { utilization: performance.eventLoopUtilization(), requests: this.load.requests, at: performance.now() };
  }

  register(kind: string, handler: OutboxKind): void {
    this.kinds.set(kind, handler);
  }

  /**
   * A fresh message id in the form a Message-ID header takes (without the angle brackets): the
   * time first, so the unique index takes each new id at its end (a random id would touch a
   * random page of it with every insert), then a sequence and random bits of this process.
   */
  newMessageId(): string {
    this.idSequence = (this.idSequence + 1) % 0x100000;
    return `${Date.now().toString(36).padStart(9, '0')}.${this.idSequence.toString(36).padStart(4, '0')}.${this.workerId.slice(0, 8)}${randomUUID().slice(24)}@${this.host}`;
  }

  /** Queues one item inside the caller's transaction; an item with a messageId already queued is ignored. */
  async enqueue(executor: Executor, kind: string, payload: unknown, options: EnqueueOptions = {}): Promise<void> {
    const now = this.clock.now();
    await INSERT_ITEM.rows(executor, kind, options.messageId ?? this.newMessageId(), JSON.stringify(payload), options.runAt ?? now, now);
    this.poke();
  }

  /**
   * Queues `part` of an item of `kind` whose payload is `{ parts: [...] }`: inside a `transact`
   * transaction the parts its requests queue make one item, written just before it commits (a
   * shared commit of 30 alerts writes one row, not 30); elsewhere an item of this part alone.
   * The kind's sender handles each part as if it were an item of its own.
   */
  async enqueuePart(executor: Executor, kind: string, part: unknown): Promise<void> {
    let flush = this.partFlushes.get(kind);
    if (!flush) {
      flush = (trx: Executor, parts: unknown[]) => this.enqueue(trx, kind, { parts });
      this.partFlushes.set(kind, flush);
    }
    if (!gatherForCommit(executor, `outbox:${kind}`, part, flush)) await this.enqueue(executor, kind, { parts: [part] });
  }

  /** Items per kind and state (sending ones count as pending), for `/-/metrics` and operators. */
  async counts(): Promise<Array<{ kind: string; state: string; n: number }>> {
    const rows = await this.db
      .selectFrom('outbox')
      .select(['kind', 'state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy(['kind', 'state'])
      .execute();
    const merged = new Map<string, { kind: string; state: string; n: number }>();
    for (const row of rows) {
      const state = row.state === 'sending' ? 'pending' : row.state;
      const key = `${row.kind}\u0000${state}`;
      const entry = merged.get(key) ?? { kind: row.kind, state, n: 0 };
      entry.n += Number(row.n);
      merged.set(key, entry);
    }
    return [...merged.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.state.localeCompare(b.state));
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * Sends due items until none is left (or `limit` were handled); tests call it instead of
   * waiting for the loop. Returns how many items were handled, an item of parts
   * (`enqueuePart`) counting as many as it has. With `yieldTo`, it stops claiming once that many
   * requests have begun since it started (requests come first); `oneAtATime` claims items one by
   * one, so a busy process's bounded batch is not overshot by a claim of large items.
   */
  async drain(limit = 10_000, options: { yieldTo?: number; oneAtATime?: boolean } = {}): Promise<number> {
    const requestsAtStart = this.load.requests;
    let done = 0;
    const inFlight = new Set<Promise<void>>();
    let exhausted = false;
    // Items in flight keep their lease while a slow server takes its time; only a process that
    // died stops renewing, so its items are taken over a lease later.
    const renew = setInterval(
      () => {
        if (inFlight.size > 0) this.renewLeases().catch((error: unknown) => this.log.warn({ err: error }, 'outbox lease renewal failed'));
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    renew.unref();
    try {
      while (done < limit) {
        // Claims go in batches: when half the slots are free, not one statement per item.
        if (options.yieldTo !== undefined && this.load.since(requestsAtStart) >= options.yieldTo) {
          // Requests came while it sent: the process counts as busy until a gap says otherwise.
          exhausted = true;
          this.lastVerdict = true;
        }
        if (!exhausted && inFlight.size <= this.concurrency / 2 && done < limit) {
          const want = options.oneAtATime ? 1 : Math.min(this.concurrency - inFlight.size, limit - done);
          const batch = await this.claim(want);
          if (batch.length === 0) exhausted = true;
          for (const row of batch) {
            const item = itemOf(row);
            done += weightOf(item);
            const task: Promise<void> = this.deliver(item)
              .catch((error: unknown) => this.log.error({ err: error, outbox: item.id }, 'outbox delivery failed'))
              .finally(() => inFlight.delete(task));
            inFlight.add(task);
          }
          if (batch.length > 0) continue;
        }
        if (inFlight.size === 0) break;
        // Wait for one to finish, then claim more: items keep flowing while slow ones wait.
        await Promise.race(inFlight);
        if (this.sentIds.length >= 64) await this.flushSent();
        exhausted = false;
      }
      await Promise.all(inFlight);
      await this.flushSent();
    } finally {
      clearInterval(renew);
    }
    return done;
  }

  private async flushSent(): Promise<void> {
    if (this.sentIds.length === 0) return;
    const ids = this.sentIds.splice(0, this.sentIds.length);
    const now = this.clock.now();
    await this.db
      .updateTable('outbox')
      .set({ state: 'sent', lease_owner: null, lease_until: null, last_error: null, updated_at: now, settled_at: now })
      .where('id', 'in', ids)
      .where('state', '=', 'sending')
      .where('lease_owner', '=', this.workerId)
      .execute();
  }

  private async renewLeases(): Promise<void> {
    const now = this.clock.now();
    await this.db
      .updateTable('outbox')
      .set({ lease_until: now + this.leaseMs })
      .where('state', '=', 'sending')
      .where('lease_owner', '=', this.workerId)
      .execute();
  }

  /**
   * Another thread runs this outbox's loop (src/outbox-thread.ts): a new item tells it there,
   * through `notify`, instead of waking a loop here.
   */
  forwardWakeUps(notify: () => void): void {
    this.forward = notify;
  }

  /** A new item was queued (here, or in the thread that forwards): the loop looks soon rather than at its next poll. */
  wake(): void {
    this.poke();
  }

  private poke(): void {
    if (this.forward) {
      this.forward();
      return;
    }
    if (this.stopped) return;
    if (this.running) {
      this.poked = true;
      return;
    }
    if (this.pokePending) return;
    this.pokePending = true;
    // Under load a new item waits for the next poll rather than starting a drain per request.
    if (this.busy()) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  /**
   * Whether requests keep this process busy, over the gap since the last drain ended (which holds
   * none of the outbox's own sending, so a backlog being sent never counts as load): requests
   * arriving faster than BUSY_REQUESTS_PER_SECOND, or the event loop more than half used. The
   * count matters where the loop's use cannot show load: a process that shares its core with
   * others waits for the CPU in the poll phase, which counts as idle.
   */
  private busy(): boolean {
    const seconds = (performance.now() - this.gapStart.at) / 1000;
    const loopBusy =
      performance.eventLoopUtilization(performance.eventLoopUtilization(), this.gapStart.utilization).utilization > BUSY_UTILIZATION;
    // Right after a drain no request may have arrived yet, whatever the load: a gap too short to
    // count requests in keeps the verdict of the last one that was long enough.
    if (seconds < MIN_JUDGED_GAP_MS / 1000) return loopBusy || this.lastVerdict;
    this.lastVerdict = loopBusy || this.load.since(this.gapStart.requests) / seconds > BUSY_REQUESTS_PER_SECOND;
    return this.lastVerdict;
  }

  /**
   * The loop: requests come first. While they keep the process busy, each poll sends one bounded
   * batch of `busyBatch` parts and leaves the rest for later (a storm's mail waits, the ingestion
   * that causes it keeps its rate). Otherwise it sends in chunks of IDLE_CHUNK items with a short
   * gap between them, and a chunk stops claiming as soon as requests begin to arrive.
   */
  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.poked = false;
      this.pokePending = false;
      const busy = this.busy();
      const limit = busy ? this.busyBatch : IDLE_CHUNK;
      this.running = this.drain(limit, busy ? { oneAtATime: true } : { yieldTo: IDLE_YIELD_REQUESTS })
        .then(async (done) => {
          await this.prune();
          return done;
        })
        .catch((error: unknown) => {
          this.log.error({ err: error }, 'outbox loop failed');
          return 0;
        })
        .then((done) => {
          this.running = null;
          this.gapStart = { utilization: performance.eventLoopUtilization(), requests: this.load.requests, at: performance.now() };
          const more = done >= limit || this.poked;
          if (!this.stopped) this.schedule(more && !busy ? IDLE_GAP_MS : this.pollMs);
        });
    }, delay);
    this.timer.unref();
  }

  /** Takes up to `n` due items (or items whose holder's lease ran out) under this process's lease. */
  private async claim(n: number): Promise<ClaimedRow[]> {
    const now = this.clock.now();
    // SQLite (one writer at a time): each state's first `n` from its index, then the first `n` of
    // those; one condition with OR would read every due item and sort them all, however many are
    // queued. PostgreSQL locks what it takes and skips what another process holds.
    const due =
      this.dialect === 'postgres'
        ? sql`select id from outbox
               where (state in ('pending', 'failed') and next_attempt_at <= ${now})
                  or (state = 'sending' and lease_until < ${now})
               order by next_attempt_at, id limit ${n} for update skip locked`
        : sql`select id from (
                select * from (select id, next_attempt_at from outbox
                  where state = 'pending' and next_attempt_at <= ${now} order by next_attempt_at, id limit ${n})
                union all
                select * from (select id, next_attempt_at from outbox
                  where state = 'failed' and next_attempt_at <= ${now} order by next_attempt_at, id limit ${n})
                union all
                select * from (select id, next_attempt_at from outbox
                  where state = 'sending' and lease_until < ${now} order by next_attempt_at, id limit ${n}))
               order by next_attempt_at, id limit ${n}`;
    const result = await sql<ClaimedRow>`
      update outbox
         set state = 'sending', lease_owner = ${this.workerId}, lease_until = ${now + this.leaseMs},
             attempts = attempts + 1, updated_at = ${now}
       where id in (${due})
      returning id, kind, message_id, payload, attempts, created_at`.execute(this.db);
    return result.rows;
  }

  private async deliver(item: OutboxItem): Promise<void> {
    const handler = this.kinds.get(item.kind);
    let result: SendResult;
    if (!handler) result = { ok: false, error: `no handler for outbox kind ${item.kind}` };
    else {
      try {
        result = await handler.send(item);
      } catch (error) {
        result = { ok: false, error: errorText(error) };
      }
    }
    const now = this.clock.now();
    // Only the lease holder records the outcome: a process that lost its lease to another leaves it.
    const record = (executor: Executor, values: Updateable<OutboxTable>) =>
      executor
        .updateTable('outbox')
        .set({ lease_owner: null, lease_until: null, updated_at: now, ...values })
        .where('id', '=', item.id)
        .where('state', '=', 'sending')
        .where('lease_owner', '=', this.workerId)
        .executeTakeFirst();
    if (result.ok) {
      // Sent items without a reaction are recorded together (one statement per batch); a crash
      // before that statement sends them again, with the same message id.
      if (!handler?.onSettled) this.sentIds.push(item.id);
      else await this.settle(handler, item, 'sent', (executor) => record(executor, { state: 'sent', last_error: null, settled_at: now }));
      return;
    }
    const max = handler?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    const dead = result.permanent === true || item.attempts >= max;
    const error = result.error.slice(0, 2000);
    this.log.warn(
      { outbox: item.id, kind: item.kind, attempt: item.attempts, error },
      dead ? 'outbox item dead' : 'outbox item failed, will retry',
    );
    if (dead) {
      await this.settle(handler, item, 'dead', (executor) => record(executor, { state: 'dead', last_error: error, settled_at: now }));
      return;
    }
    const wait = result.retryAfterMs ?? (handler?.backoffMs ?? defaultBackoffMs)(item.attempts);
    await record(this.db, { state: 'failed', last_error: error, next_attempt_at: now + Math.max(0, wait) });
  }

  /** Records the outcome and, in the same transaction, lets the kind react (once: only if this process still held it). */
  private async settle(
    handler: OutboxKind | undefined,
    item: OutboxItem,
    outcome: 'sent' | 'dead',
    update: (executor: Executor) => Promise<{ numUpdatedRows: bigint }>,
  ): Promise<void> {
    if (!handler?.onSettled) {
      await update(this.db);
      return;
    }
    await this.db.transaction().execute(async (trx) => {
      const updated = await update(trx);
      if (updated.numUpdatedRows > 0n) await handler.onSettled?.(item, outcome, trx);
    });
  }

  /** Deletes sent items older than the retention, at most once a minute (dead ones stay for operators). */
  private async prune(): Promise<void> {
    const now = this.clock.now();
    if (now - this.lastPrune < 60_000) return;
    this.lastPrune = now;
    await this.db
      .deleteFrom('outbox')
      .where('state', '=', 'sent')
      .where('settled_at', '<', now - this.retentionMs)
      .execute();
  }
}
