// The SQLite checkpoint thread of checkpointer.ts, with its own connection to the database
// file. Plain CommonJS, so the same file runs from src/ under tsx and from a compiled build
// (scripts/build.mjs copies it into dist/).
'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const Database = require('better-sqlite3');

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
