// The outbox's thread (src/outbox-thread.ts): the modules' services over a database connection of
// its own, no routes, and the outbox's loop; nothing else of the server runs here.
import { parentPort, workerData } from 'node:worker_threads';
import { buildApp } from './app.js';
import { openDatabase } from './infra/db/index.js';
import { RequestLoad } from './infra/load.js';
import type { OutboxThreadData } from './outbox-thread.js';

const { config, requests } = workerData as OutboxThreadData;
// A small pool on PostgreSQL; on SQLite the HTTP thread's connection runs the checkpoints.
const database = openDatabase({
  databaseUrl: config.databaseUrl,
  sqliteFile: config.sqliteFile,
  schema: config.databaseSchema,
  poolSize: 4,
  checkpoints: false,
});
const app = await buildApp(config, { database, startJobs: false, routes: false, load: new RequestLoad(requests) });
const { outbox, mail, limiter } = app.platform;
outbox.start();
app.log.info({ thread: 'outbox' }, 'outbox thread started');

parentPort?.on('message', (message: unknown) => {
  if (message === 'wake') outbox.wake();
  if (message !== 'stop') return;
  void (async () => {
    await outbox.stop();
    await mail.close();
    await limiter.store.close();
    await database.close();
    parentPort?.close();
  })();
});
