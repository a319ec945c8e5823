import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../src/infra/db/index.js';

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

  it('a write sent alone is its own transaction and settles after its commit', async () => {
    assert.equal(await insert('alone'), 'alone');
    assert.ok(names().includes('alone'));
  });
});
