import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle, type Executor } from '../../src/infra/db/index.js';

/**
 * A second connection writing to the same SQLite file while this one runs transactions that
 * read before they write, as the outbox's thread does beside the HTTP thread (and another
 * process, or `basalt admin`, beside a server). Begun deferred, such a transaction whose snapshot
 * another connection's commit has passed is refused SQLITE_BUSY at its first write, without
 * waiting; begun IMMEDIATE (src/infra/db/sqlite-immediate.ts) it waits for the lock and succeeds.
 */
describe('SQLite transactions beside another connection that writes', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-writers-'));
  const file = path.join(dir, 'writers.sqlite3');
  let handle: DatabaseHandle;
  let writer: Worker;
  const stop = new Int32Array(new SharedArrayBuffer(8));

  before(async () => {
    handle = openDatabase({ databaseUrl: null, sqliteFile: file, schema: null });
    await sql`create table counters (id integer primary key, value integer not null)`.execute(handle.db);
    await sql`insert into counters (id, value) values (1, 0)`.execute(handle.db);
    await sql`create table other_writes (id integer primary key, at integer not null)`.execute(handle.db);
    // The other connection: a commit of its own every millisecond or so until told to stop.
    writer = new Worker(
      `const { workerData } = require('node:worker_threads');
       const SQLite = require(workerData.betterSqlite3);
       const db = new SQLite(workerData.file);
       db.pragma('busy_timeout = 5000');
       const insert = db.prepare('insert into other_writes (at) values (?)');
       const stop = new Int32Array(workerData.stop);
       while (Atomics.load(stop, 0) === 0) {
         insert.run(Date.now());
         Atomics.add(stop, 1, 1);
         Atomics.wait(stop, 0, 0, 1);
       }
       db.close();`,
      { eval: true, workerData: { file, stop: stop.buffer, betterSqlite3: createRequire(import.meta.url).resolve('better-sqlite3') } },
    );
    while (Atomics.load(stop, 1) < 5) await sleep(5);
  });
  after(async () => {
    Atomics.store(stop, 0, 1);
    Atomics.notify(stop, 0);
    await new Promise((resolve) => writer.once('exit', resolve));
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Reads the counter, lets the other connection commit, then writes the counter plus one. */
  const readThenWrite = async (trx: Executor) => {
    const row = await sql<{ value: number }>`select value from counters where id = 1`.execute(trx);
    await sleep(3);
    await sql`update counters set value = ${(row.rows[0]?.value ?? 0) + 1} where id = 1`.execute(trx);
  };

  it('a transaction that reads, waits while the other connection commits, then writes, succeeds every time', async () => {
    const committedBefore = Atomics.load(stop, 1);
    for (let i = 0; i < 40; i += 1) {
      await handle.db.transaction().execute(readThenWrite);
      // A pause now and then, long enough for the other connection's busy wait to get the lock.
      if (i % 10 === 9) await sleep(120);
    }
    const counter = await sql<{ value: number }>`select value from counters where id = 1`.execute(handle.db);
    assert.equal(counter.rows[0]?.value, 40);
    // Between the transactions (not inside them: each holds the write lock from its BEGIN).
    assert.ok(Atomics.load(stop, 1) > committedBefore, 'the other connection committed meanwhile');
  });

  it('so does a shared commit of such requests (the write batcher)', async () => {
    const before = (await sql<{ value: number }>`select value from counters where id = 1`.execute(handle.db)).rows[0]?.value ?? 0;
    for (let round = 0; round < 10; round += 1) await handle.transact(readThenWrite);
    const after = (await sql<{ value: number }>`select value from counters where id = 1`.execute(handle.db)).rows[0]?.value ?? 0;
    assert.equal(after - before, 10);
  });
});
