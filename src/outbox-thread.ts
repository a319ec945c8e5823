import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config/index.js';
import type { RequestLoad } from './infra/load.js';

/**
 * Wake-ups within this long of each other reach the thread as one message: a message costs the
 * HTTP thread about as much as a small query (a profile under alert load put 0.8 % of its time in
 * `postMessage` at 20 ms), and a busy thread polls every second anyway. Mail queued on a quiet
 * server leaves within this long.
 */
const WAKE_COALESCE_MS = 200;
/** How long a stop waits for the thread to finish the items in flight before ending it. */
const STOP_TIMEOUT_MS = 10_000;
/** The wait before a thread that died is started again. */
const RESTART_DELAY_MS = 1_000;

/** What the thread is started with (src/outbox-thread.worker.ts). */
export interface OutboxThreadData {
  config: Config;
  /** The HTTP thread's request count (RequestLoad's shared memory): the loop gives way to requests. */
  requests: SharedArrayBuffer;
}

/** The thread's code: compiled beside this module (dist/, the test build), or run through tsx from src/. */
function entry(): { file: URL; execArgv: string[] } {
  const compiled = new URL('./outbox-thread.worker.js', import.meta.url);
  if (existsSync(compiled)) return { file: compiled, execArgv: [] };
  const source = new URL('./outbox-thread.worker.ts', import.meta.url);
  if (existsSync(source)) return { file: source, execArgv: ['--import', 'tsx'] };
  throw new Error(`the outbox thread's code is missing: ${fileURLToPath(compiled)}`);
}

/**
 * The outbox's loop (claims, the expansion of alert mail into e-mails, their templates, webhook
 * deliveries) on a thread of its own, with its own database connection. In the HTTP thread's
 * isolate that code, run a few times a second while a storm's mail trickles out, kept being
 * compiled and made the request path's calls polymorphic: alert ingestion with mail kept 0.73 of
 * its rate (docs/performance.md "Mail"). Items are still queued by the HTTP thread in the
 * transaction of their change; a wake-up message tells the thread to look. A thread that dies is
 * logged and started again; its items' leases run out and are taken over, as a killed process's.
 */
export class OutboxThread {
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private wakePending = false;
  private stopping = false;

  constructor(
    private readonly data: OutboxThreadData,
    private readonly log: FastifyBaseLogger,
  ) {}

  static start(config: Config, load: RequestLoad, log: FastifyBaseLogger): OutboxThread {
    const thread = new OutboxThread({ config, requests: load.buffer }, log);
    thread.spawn();
    return thread;
  }

  /** A new item was queued: the thread's loop looks within WAKE_COALESCE_MS (one message for all of them). */
  wake(): void {
    if (this.wakePending || !this.worker) return;
    this.wakePending = true;
    setTimeout(() => {
      this.wakePending = false;
      this.worker?.postMessage('wake');
    }, WAKE_COALESCE_MS).unref();
  }

  /** Asks the thread to finish what it holds and stop; ends it after STOP_TIMEOUT_MS. */
  async stop(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    if (!worker) return;
    worker.postMessage('stop');
    const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
    await this.exited;
    clearTimeout(timer);
  }

  private spawn(): void {
    const { file, execArgv } = entry();
    const worker = new Worker(file, { workerData: this.data, execArgv });
    this.worker = worker;
    this.exited = new Promise((resolve) => {
      worker.once('exit', (code) => {
        this.worker = null;
        resolve();
        if (this.stopping) return;
        this.log.error({ code }, 'the outbox thread exited; starting another');
        setTimeout(() => {
          if (!this.stopping) this.spawn();
        }, RESTART_DELAY_MS).unref();
      });
    });
    worker.on('error', (error) => this.log.error({ err: error }, 'the outbox thread failed'));
  }
}
