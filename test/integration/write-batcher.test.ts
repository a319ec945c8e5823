import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { gatherForCommit, openDatabase, type DatabaseHandle, type Executor } from '../../src/infra/db/index.js';
import { BackgroundCheckpointer } from '../../src/infra/db/checkpointer.js';
import { WriteBatcher } from '../../src/infra/db/write-batcher.js';

/**
 * Group commit on SQLite (src/infra/db/write-batcher.ts): write transactions arriving
 * together share one COMMIT, each settles only once it is durable, and a failing one fails
 * alone. A second connection to the file stands for another process (or a crash check).
 */
describe('write transactions on SQLite share commits', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-batch-'));
  const file = path.join(dir, 'batch.sqlite3');
  let handle: DatabaseHandle;
  let other: SQLite.Database;

  before(async () => {
    handle = openDatabase({ databaseUrl: null, sqliteFile: file, schema: null });
    await sql`create table items (id integer primary key, name text not null unique)`.execute(handle.db);
    other = new SQLite(file);
  });
  after(async () => {
    other.close();
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (name: string) =>
    handle.transact(async (trx) => {
      await sql`insert into items (name) values (${name})`.execute(trx);
      return name;
    });
  const names = () => (other.prepare('select name from items order by id').all() as { name: string }[]).map((r) => r.name);
  /**
   * Pages appended to the write-ahead log so far: each commit appends every page it changed
   * (a 4 KiB page and a 24-byte header a frame), so separate commits of one row each append
   * at least a frame apiece. The log only grows here (no checkpoint before 1,000 pages).
   */
  const walFrames = () => Math.floor(statSync(`${file}-wal`).size / (4096 + 24));

  it('twenty writes sent together all land, visible to another connection once they settle, in one or two commits', async () => {
    const before = walFrames();
    const written = await Promise.all(Array.from({ length: 20 }, (_, i) => insert(`together-${i}`)));
    assert.deepEqual(
      written,
      Array.from({ length: 20 }, (_, i) => `together-${i}`),
    );
    assert.deepEqual(
      names().filter((n) => n.startsWith('together-')),
      written,
    );
    const frames = walFrames() - before;
    assert.ok(frames >= 1 && frames <= 6, `20 one-row writes appended ${frames} pages to the log`);
  });

  it('a write that fails inside a batch fails alone: its rows are gone, the others are kept', async () => {
    await insert('taken');
    const results = await Promise.allSettled([
      insert('batch-a'),
      handle.transact(async (trx) => {
        await sql`insert into items (name) values ('half-done')`.execute(trx);
        await sql`insert into items (name) values ('taken')`.execute(trx); // unique violation
      }),
      insert('batch-b'),
    ]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.match(String(results[1].reason), /UNIQUE/);
    assert.equal(results[2].status, 'fulfilled');
    const now = names();
    assert.ok(now.includes('batch-a') && now.includes('batch-b'), now.join(','));
    assert.ok(!now.includes('half-done'), 'the failed write left nothing behind');
  });

  it('values gathered for the commit are written once per shared commit, and not at all for a write that fails', async () => {
    await sql`create table gathered (id integer primary key, names text not null)`.execute(handle.db);
    const flush = async (trx: Executor, values: string[]) => {
      await sql`insert into gathered (names) values (${values.join(',')})`.execute(trx);
    };
    const gathering = (name: string, fail = false) =>
      handle.transact(async (trx) => {
        assert.equal(gatherForCommit(trx, 'names', name, flush), true);
        if (fail) await sql`insert into items (name) values ('taken')`.execute(trx); // unique violation
        return name;
      });
    const rows = () => (other.prepare('select names from gathered order by id').all() as { names: string }[]).map((r) => r.names);
    await Promise.all([gathering('g1'), gathering('g2'), gathering('g3')]);
    assert.deepEqual(rows(), ['g1,g2,g3'], 'one row for the three writes of one commit');
    // A failure rolls the batch back; each write runs again alone, with its own buffer.
    const results = await Promise.allSettled([gathering('h1'), gathering('h2', true), gathering('h3')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(rows().slice(1), ['h1', 'h3'], 'the failed write gathered nothing that stays');
    // Outside a `transact` transaction nothing is gathered: the caller writes at once.
    assert.equal(gatherForCommit(handle.db, 'names', 'x', flush), false);
    await handle.db.transaction().execute(async (trx) => assert.equal(gatherForCommit(trx, 'names', 'y', flush), false));
    assert.equal(rows().length, 3);
  });

  it('a write sent alone is its own transaction and settles after its commit', async () => {
    assert.equal(await insert('alone'), 'alone');
    assert.ok(names().includes('alone'));
  });

  it('a hold waits for the batch being written, and writes sent meanwhile wait until it ends', async () => {
    const batcher = new WriteBatcher(handle.db);
    const order: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const write = (name: string, wait?: Promise<void>) =>
      batcher.transact(async (trx) => {
        if (wait) await wait;
        await sql`insert into items (name) values (${name})`.execute(trx);
        order.push(name);
      });
    const first = write('held-first', gate);
    await new Promise((resolve) => setImmediate(resolve)); // its batch has begun
    let endTask!: () => void;
    const hold = batcher.quiesce(async () => {
      order.push('task begins');
      await new Promise<void>((resolve) => (endTask = resolve));
      order.push('task ends');
    });
    const second = write('held-second');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(order.length, 0, 'neither the task nor the later write ran before the batch being written ended');
    openGate();
    await first;
    while (!order.includes('task begins')) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(order, ['held-first', 'task begins'], 'the later write waits for the task');
    endTask();
    await Promise.all([hold, second]);
    assert.deepEqual(order, ['held-first', 'task begins', 'task ends', 'held-second']);
    assert.ok(names().includes('held-second'));
  });

  it('a write sent just before a hold, whose batch has not begun yet, waits until the hold ends', async () => {
    const batcher = new WriteBatcher(handle.db);
    const order: string[] = [];
    const queued = batcher.transact(async (trx) => {
      await sql`insert into items (name) values ('queued-before-hold')`.execute(trx);
      order.push('write');
    });
    let endTask!: () => void;
    const hold = batcher.quiesce(async () => {
      order.push('task begins');
      await new Promise<void>((resolve) => (endTask = resolve));
      order.push('task ends');
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(order, ['task begins'], 'the queued write did not begin inside the hold');
    endTask();
    await Promise.all([hold, queued]);
    assert.deepEqual(order, ['task begins', 'task ends', 'write']);
    assert.ok(names().includes('queued-before-hold'));
  });
});

/**
 * The write-ahead log starts over from its beginning only when a write begins after every
 * frame has been checkpointed. Under a steady stream of writes the background checkpointer
 * never gets there on its own, so once the log is long it asks for writes to be held while
 * it catches up and starts the log over (src/infra/db/checkpointer.ts).
 */
describe('the background checkpointer lets a long write-ahead log start over', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-wal-'));
  const file = path.join(dir, 'wal.sqlite3');
  let writer: SQLite.Database;
  let checkpointer: BackgroundCheckpointer;

  before(() => {
    writer = new SQLite(file);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0'); // only the background checkpointer checkpoints
    writer.exec('create table blobs (id integer primary key, body text not null)');
  });
  after(async () => {
    await checkpointer.stop();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The WAL header's checkpoint sequence number: it moves each time the log starts over. */
  const restarts = () => readFileSync(`${file}-wal`).readUInt32BE(12);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('holds writes once the log passes the limit, starts the log over itself, and holds no more while idle', async () => {
    const insert = writer.prepare('insert into blobs (body) values (?)');
    writer.transaction(() => {
      for (let i = 0; i < 300; i += 1) insert.run('x'.repeat(3000)); // a page a row
    })();
    const before = restarts();
    let holds = 0;
    checkpointer = new BackgroundCheckpointer(file, { intervalMs: 10, restartFrames: 200 });
    checkpointer.holdWritesWith(async (task) => {
      holds += 1;
      await task();
    });
    for (let waited = 0; holds === 0 && waited < 5000; waited += 10) await sleep(10);
    assert.equal(holds, 1, 'a hold was asked for');
    await sleep(150); // fifteen turns of the checkpointer with no write
    assert.equal(holds, 1, 'an idle log is not held again');
    assert.equal(restarts(), before + 1, 'the checkpointer started the log over during the hold');
    insert.run('after the hold');
    assert.equal(restarts(), before + 1, 'the next write appends to the restarted log');
    assert.equal(writer.prepare('select count(*) from blobs').pluck().get(), 301);
    assert.equal(Math.floor(statSync(`${file}-wal`).size / (4096 + 24)) >= 300, true, 'the file keeps its length; its frames are reused');
  });
});

describe('a checkpoint thread that cannot open its database', () => {
  it('stops alone with a warning, and stopping it later still settles', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      const missing = path.join(os.tmpdir(), `basalt-missing-${process.pid}`, 'no', 'such.sqlite3');
      const checkpointer = new BackgroundCheckpointer(missing, { intervalMs: 10, restartFrames: 200 });
      for (let waited = 0; warnings.length === 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.match(warnings.join('\n'), /SQLite checkpoint thread stopped/);
      await checkpointer.stop();
    } finally {
      process.off('warning', onWarning);
    }
  });
});
