// What one row costs SQLite (WAL, synchronous=NORMAL) in statement time and in its share of a
// commit, for the row shapes ingestion writes: a 2.4 KB row with a unique index on a random
// key (alert fingerprints, event ids) against the same row with no secondary index, in
// batches of 28 (a typical group commit under 50 connections). docs/performance.md cites it.
//
//   npx tsx bench/wal-pages.ts
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';

const db = new SQLite(path.join(mkdtempSync(path.join(os.tmpdir(), 'basalt-wal-')), 'wal.sqlite3'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
db.pragma('mmap_size = 268435456');
db.pragma('cache_size = -65536');
db.exec(`create table keyed (id integer primary key, project_id integer, fingerprint text, payload text, status text);
create unique index keyed_fingerprint on keyed (project_id, fingerprint) where status <> 'resolved';
create table plain (id integer primary key, payload text)`);
const insertKeyed = db.prepare("insert into keyed (project_id, fingerprint, payload, status) values (1, ?, ?, 'triggered')");
const insertPlain = db.prepare('insert into plain (payload) values (?)');
const payload = 'x'.repeat(2400);
// 50,000 rows first, so the random-key index has far more leaf pages than a batch touches.
db.transaction(() => {
  for (let i = 0; i < 50_000; i += 1) insertKeyed.run(randomBytes(20).toString('hex'), payload);
})();
db.pragma('wal_checkpoint(TRUNCATE)');

const begin = db.prepare('begin');
const commit = db.prepare('commit');
function measure(label: string, rowsPerCommit: number, write: () => void): void {
  const rounds = 300;
  let statements = 0n;
  let commits = 0n;
  for (let round = 0; round < rounds; round += 1) {
    begin.run();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < rowsPerCommit; i += 1) write();
    const t1 = process.hrtime.bigint();
    commit.run();
    statements += t1 - t0;
    commits += process.hrtime.bigint() - t1;
    if (round % 50 === 0) db.pragma('wal_checkpoint(PASSIVE)');
  }
  const perRow = (ns: bigint) => (Number(ns) / rounds / rowsPerCommit / 1000).toFixed(1);
  process.stdout.write(`${label.padEnd(44)} statement ${perRow(statements)} µs/row, commit ${perRow(commits)} µs/row\n`);
}
measure('2.4 KB row + random-key unique index, 28', 28, () => insertKeyed.run(randomBytes(20).toString('hex'), payload));
measure('2.4 KB row, no secondary index, 28', 28, () => insertPlain.run(payload));
measure('2.4 KB row, no secondary index, alone', 1, () => insertPlain.run(payload));
