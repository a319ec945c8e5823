// Baseline servers the Basalt scenarios are compared with in the same run (issue 9):
// bare node:http, bare Fastify, Fastify + SHA-256 + primary-key SELECT on better-sqlite3,
// and Fastify parsing a 2 KB JSON body and inserting one row (WAL).
// Usage: tsx bench/servers/baselines.ts <name>; prints {"port": N} when listening.
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';

const name = process.argv[2];

function announce(port: number): void {
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}

function sqlite(): SQLite.Database {
  const db = new SQLite(path.join(mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-')), 'baseline.sqlite3'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  return db;
}

async function main(): Promise<void> {
  if (name === 'node-http') {
    const server = http.createServer((_req, res) => {
      const body = JSON.stringify({ hello: 'world' });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    server.listen(0, '127.0.0.1', () => announce((server.address() as { port: number }).port));
    return;
  }
  const app = Fastify({ logger: false });
  if (name === 'fastify') {
    app.get('/', async () => ({ hello: 'world' }));
  } else if (name === 'fastify-lookup') {
    // What resolving a token minimally costs: hash the secret, read one row by key.
    const db = sqlite();
    db.exec('create table tokens (digest text primary key, user_id integer not null, scopes text not null)');
    db.exec('create table users (id integer primary key, username text not null, is_admin integer not null)');
    db.prepare('insert into users values (1, ?, 0)').run('bench');
    db.prepare('insert into tokens values (?, 1, ?)').run(createHash('sha256').update('bench-token').digest('hex'), 'api');
    const find = db.prepare('select t.user_id, t.scopes, u.username from tokens t join users u on u.id = t.user_id where t.digest = ?');
    app.get('/', async (request, reply) => {
      const token = request.headers['private-token'];
      const row = typeof token === 'string' ? find.get(createHash('sha256').update(token).digest('hex')) : undefined;
      if (!row) return reply.code(401).send({ message: '401 Unauthorized' });
      return row;
    });
  } else if (name === 'fastify-insert') {
    // What accepting a payload minimally costs: parse 2 KB of JSON, insert one row durably.
    const db = sqlite();
    db.exec('create table payloads (id integer primary key, project_id integer not null, body text not null, created_at integer not null)');
    const insert = db.prepare('insert into payloads (project_id, body, created_at) values (?, ?, ?)');
    app.post('/', async (request) => {
      const info = insert.run(1, JSON.stringify(request.body), Date.now());
      return { id: Number(info.lastInsertRowid) };
    });
  } else {
    throw new Error(`unknown baseline ${name ?? '(none)'}`);
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  announce((app.server.address() as { port: number }).port);
}

await main();
