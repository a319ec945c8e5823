import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface CheckpointTimings {
  /** How often the background connection moves the write-ahead log into the database file. */
  intervalMs: number;
  /** Log frames (pages) past which the log should start over from its beginning. */
  restartFrames: number;
}

const DEFAULT_TIMINGS: CheckpointTimings = { intervalMs: 200, restartFrames: 4096 };
/** How long writes wait for the catch-up checkpoint before they go on regardless. */
const CATCH_UP_TIMEOUT_MS = 2000;

/**
 * The worker's code is a plain CommonJS file next to this module, linted like the rest: found
 * in src/ under tsx, in dist/ (scripts/build.mjs copies it) and in a bench build
 * (tsconfig.bench.json emits it with allowJs).
 */
function workerFile(): URL {
  const file = new URL('./checkpointer.worker.cjs', import.meta.url);
  if (!existsSync(file)) throw new Error(`the SQLite checkpoint worker is missing: ${fileURLToPath(file)}`);
  return file;
}

/** Holds the main connection's writes while `task` runs (WriteBatcher.quiesce). */
export type Quiesce = (task: () => Promise<void>) => Promise<void>;

/**
 * Checkpoints the SQLite write-ahead log from a worker thread with its own connection. By
 * default SQLite checkpoints inside the commit that crosses 1,000 log pages: that commit
 * copies the pages into the database file and waits for two fsyncs on the event loop, which
 * on this class of machine cost a quarter of ingestion throughput. A PASSIVE checkpoint
 * never blocks writers; what it does not finish (a reader still on an old snapshot) the
 * next turn does. Durability is unchanged: committed transactions are in the log either way.
 *
 * The log only starts over from its beginning when a write begins after every frame has been
 * copied. Under a steady stream of writes the worker never gets there on its own (new
 * frames arrive while it copies), so the log grew until the main connection's automatic
 * checkpoint did it on the event loop, with its fsyncs: a stall of tens of milliseconds each
 * second at ingestion rates (docs/perf-lab.md). Instead, when the log passes
 * `restartFrames` the worker copies what it can, then asks; the main connection holds its
 * writes (requests are still read and answered meanwhile) while the worker copies the short
 * tail and itself makes the write that starts the log over, since that write waits for the
 * disk to sync the new log header. When a reader stands in the way the log is not restarted
 * and the next turn tries again. The main connection keeps a far-off automatic checkpoint as
 * a backstop should this thread fall behind.
 */
export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private quiesce: Quiesce | null = null;
  private stopping = false;
  private exited = false;

  constructor(file: string, timings: CheckpointTimings = DEFAULT_TIMINGS) {
    this.worker = new Worker(workerFile(), { workerData: { file, ...timings } });
    this.worker.unref();
    this.worker.on('message', (message: unknown) => {
      if (message === 'restart-wanted') void this.restart();
    });
    // A failed thread (the file gone, say) must not take the server down with it: the main
    // connection's automatic checkpoint still bounds the log.
    this.worker.on('error', (error) => process.emitWarning(`SQLite checkpoint thread stopped: ${error.message}`));
    this.worker.on('exit', () => {
      this.exited = true;
    });
  }

  /** Stopping, or the thread is gone (a failed thread exits too): no hold is worth asking. */
  private get gone(): boolean {
    return this.stopping || this.exited;
  }

  /** Lets the log start over by holding writes through `quiesce` while the worker catches up. */
  holdWritesWith(quiesce: Quiesce): void {
    this.quiesce = quiesce;
  }

  private async restart(): Promise<void> {
    if (!this.quiesce || this.gone) return;
    await this.quiesce(() => this.catchUp());
  }

  /** The worker's checkpoint of whatever is left; settles when it is done or after a timeout. */
  private catchUp(): Promise<void> {
    if (this.gone) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.worker.off('message', onMessage);
        this.worker.off('exit', done);
        resolve();
      };
      const onMessage = (message: unknown): void => {
        if (typeof message === 'object' && message !== null && 'caughtUp' in message) done();
      };
      // A worker that never answers (gone, or stuck behind the disk) must not hold writes for good.
      const timer = setTimeout(done, CATCH_UP_TIMEOUT_MS).unref();
      this.worker.on('message', onMessage);
      this.worker.once('exit', done);
      this.worker.postMessage('catch-up');
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    // Referenced again while it closes: otherwise nothing may keep this process alive to see it.
    this.worker.ref();
    this.worker.postMessage('stop');
    await exited;
  }
}
