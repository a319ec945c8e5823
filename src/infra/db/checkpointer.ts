import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the background connection moves the write-ahead log into the database file. */
const INTERVAL_MS = 200;

// A CommonJS worker from source: it runs the same way under tsx and from dist/.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
// Another process's checkpoint or a writer at the wrong moment: skip this turn, not wait.
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // SQLITE_BUSY: the next turn checkpoints.
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints the SQLite write-ahead log from a worker thread with its own connection. By
 * default SQLite checkpoints inside the commit that crosses 1,000 log pages: that commit
 * copies the pages into the database file and waits for two fsyncs on the event loop, which
 * on this class of machine cost a quarter of ingestion throughput. A PASSIVE checkpoint
 * never blocks writers; what it does not finish (a reader still on an old snapshot) the
 * next turn does. The main connection keeps a far-off automatic checkpoint as a backstop in
 * case this thread falls behind. Durability is unchanged: committed transactions are in the
 * log either way.
 */
export class BackgroundCheckpointer {
  private readonly worker: Worker;

  constructor(file: string) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, intervalMs: INTERVAL_MS } });
    this.worker.unref();
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    // Referenced again while it closes: otherwise nothing may keep this process alive to see it.
    this.worker.ref();
    this.worker.postMessage('stop');
    await exited;
  }
}
