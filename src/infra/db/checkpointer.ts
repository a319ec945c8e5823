import { createRequire } from 'node:module';
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

// A CommonJS worker from source: it runs the same way under tsx and from dist/.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
// Another process's checkpoint or a writer at the wrong moment: skip this turn, not wait.
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
// Rewritten unchanged to start the log over from this thread (see catch-up below).
const applicationId = db.pragma('application_id', { simple: true });
// Asked: a hold is on its way. heldAt: the log's length after the last catch-up; an idle log
// that has not started over yet (no write since) is not worth another hold.
let asked = false;
let heldAt = -1;
function checkpoint() {
  try {
    return db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch {
    // SQLITE_BUSY: the next turn checkpoints.
    return undefined;
  }
}
const timer = setInterval(() => {
  let result = checkpoint();
  if (!result || result.log < workerData.restartFrames || result.log === heldAt || asked) return;
  // Frames written while that checkpoint ran are still to copy: copy them (a few rounds at
  // most, each shorter than the one before) so the hold only waits for a short tail.
  for (let round = 0; round < 3; round += 1) {
    const next = checkpoint();
    if (!next) break;
    const copied = next.log - result.log;
    result = next;
    if (copied < workerData.restartFrames / 8) break;
  }
  asked = true;
  parentPort.postMessage('restart-wanted');
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'catch-up') {
    const result = checkpoint();
    const caughtUp = result !== undefined && result.busy === 0 && result.checkpointed === result.log;
    // The first write after the log is fully copied starts it over, and syncs the new log
    // header: this thread writes it (a header field set to its own value), so the main
    // connection's next commit appends without waiting for the disk.
    if (caughtUp) {
      try {
        db.pragma('application_id = ' + applicationId);
      } catch {
        // Busy: the main connection's next write starts the log over instead.
      }
    }
    asked = false;
    heldAt = result ? result.log : -1;
    parentPort.postMessage({ caughtUp });
    return;
  }
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

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
 * second at ingestion rates (docs/performance.md). Instead, when the log passes
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
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, ...timings } });
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
