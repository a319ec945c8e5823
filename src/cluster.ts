import cluster, { type Worker } from 'node:cluster';
import { serveClusterMetrics } from './infra/http/cluster-metrics.js';

export interface PrimaryOptions {
  workers: number;
  /** How long workers get to finish requests in flight after SIGTERM before they are killed. */
  shutdownTimeoutMs?: number;
  /** More unexpected worker deaths than this within a minute stop the whole server. */
  maxRestartsPerMinute?: number;
  log(message: string): void;
}

/**
 * The primary process of `WORKERS=N` (Node's cluster module: the primary owns the port and
 * hands connections to the workers in turn). Migrations have run before this is called.
 *
 * - The first worker is forked alone and the others once it listens: it creates `root` and
 *   the BASALT_ROOT_TOKEN on a fresh database, so the others find them instead of racing to
 *   insert the same token; and a configuration that cannot start stops after one try.
 * - A worker that dies while serving is replaced; more than `maxRestartsPerMinute` deaths a
 *   minute (a crash loop) stop everything with exit code 1.
 * - SIGTERM or SIGINT: every worker gets SIGTERM and finishes its requests in flight (its own
 *   15 s limit); the primary waits for all of them and exits 0 when each exited 0, otherwise 1.
 *   Workers still alive after `shutdownTimeoutMs` are killed.
 * - `/-/metrics` in any worker reports every worker's metrics summed (infra/http/cluster-metrics.ts).
 */
export function runPrimary(options: PrimaryOptions): void {
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 18_000;
  const maxRestarts = options.maxRestartsPerMinute ?? 5;
  const live = new Map<number, { worker: Worker; index: number; listening: boolean }>();
  const deaths: number[] = [];
  let stopping = false;
  let failed = false;

  const fork = (index: number): Worker => {
    const worker = cluster.fork({ BASALT_WORKER: String(index) });
    live.set(worker.id, { worker, index, listening: false });
    return worker;
  };
  const finish = () => process.exit(failed ? 1 : 0);

  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    options.log(`${reason}: stopping ${live.size} worker(s)`);
    if (live.size === 0) finish();
    for (const { worker } of live.values()) worker.process.kill('SIGTERM');
    const force = setTimeout(() => {
      options.log(`workers still running after ${shutdownTimeoutMs} ms; killing them`);
      for (const { worker } of live.values()) worker.process.kill('SIGKILL');
      failed = true;
      finish();
    }, shutdownTimeoutMs);
    force.unref();
  };

  cluster.on('listening', (worker) => {
    const entry = live.get(worker.id);
    if (!entry || entry.listening) return;
    entry.listening = true;
    // The first worker is up (and has bootstrapped): start the rest.
    if (entry.index === 0 && live.size === 1 && !stopping) for (let i = 1; i < options.workers; i += 1) fork(i);
  });

  cluster.on('exit', (worker, code, signal) => {
    const entry = live.get(worker.id);
    live.delete(worker.id);
    if (stopping) {
      if (code !== 0) failed = true;
      if (live.size === 0) finish();
      return;
    }
    options.log(`worker ${worker.process.pid ?? '?'} exited with ${signal ?? code}`);
    if (!entry?.listening) {
      failed = true;
      return stop('a worker could not start');
    }
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && (deaths[0] as number) < now - 60_000) deaths.shift();
    if (deaths.length > maxRestarts) {
      failed = true;
      return stop(`${deaths.length} workers died within a minute`);
    }
    fork(entry.index);
  });

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  serveClusterMetrics();
  fork(0);
}
