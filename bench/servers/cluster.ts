// Starts the built server (`node dist/main.js`, as `npm start` does) with WORKERS=N on
// PostgreSQL in a fresh schema, for the scale-out figures. Prints {"port": N} when ready.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { BENCH_ROOT_TOKEN } from '../scenarios.js';

const workers = process.argv[2] ?? '1';
const url = process.env.BENCH_DATABASE_URL;
if (!url) throw new Error('BENCH_DATABASE_URL is not set');
const schema = `bench_${randomBytes(4).toString('hex')}`;
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query(`create schema ${schema}`);
await client.end();
const databaseUrl = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
const port = 20000 + Math.floor(Math.random() * 10000);
// bench/run.ts starts this compiled (dist-bench/bench/servers) from the repository root.
const root = process.cwd();
// What `npm start` runs: build dist/ first when it is missing or older than the sources.
const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) throw new Error('building dist/ failed');
const child = spawn(process.execPath, [path.join(root, 'dist', 'main.js')], {
  cwd: root,
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-')),
    DATABASE_URL: databaseUrl,
    WORKERS: workers,
    LOG_LEVEL: 'warn',
    RATE_LIMITS: '',
    // Millions of new events go to one project: the per-project bound (checked all the same) must not refuse them.
    ERROR_TRACKING_MAX_EVENTS: '100000000',
    BASALT_ROOT_TOKEN: BENCH_ROOT_TOKEN,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
/**
 * The worker that answers one request on a connection of its own (the cluster hands out
 * connections, not requests: a kept-alive connection would always meet the same worker), or
 * null when nothing answers 200 yet.
 */
function probe(): Promise<string | null> {
  return new Promise((resolve) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: '/api/v4/user', agent: false, headers: { 'private-token': BENCH_ROOT_TOKEN } },
      (res) => {
        res.resume();
        const worker = res.headers['x-basalt-worker'];
        resolve(res.statusCode === 200 ? (typeof worker === 'string' ? worker : 'single') : null);
      },
    );
    request.on('error', () => resolve(null));
  });
}
// Ready when every worker answers: workers start one after the other, and each answer names
// its worker (X-Basalt-Worker when WORKERS > 1).
const seen = new Set<string>();
for (let i = 0; i < 300 && seen.size < Number(workers); i += 1) {
  const worker = await probe();
  if (worker) seen.add(worker);
  if (seen.size < Number(workers)) await new Promise((r) => setTimeout(r, 100));
}
if (seen.size < Number(workers)) {
  child.kill('SIGTERM');
  throw new Error(`the server with WORKERS=${workers} did not answer GET /api/v4/user with 200 within 30 s`);
}
process.stdout.write(
  `${JSON.stringify({ port, request: { method: 'GET', path: '/api/v4/user', headers: { 'private-token': BENCH_ROOT_TOKEN } } })}\n`,
);
process.on('SIGTERM', () => {
  child.kill('SIGTERM');
  child.once('exit', () => process.exit(0));
});
