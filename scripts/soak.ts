// `npm run soak`: the built server (as `npm start` runs it) under steady, bounded load on
// loopback for SOAK_SECONDS (default 300): authenticated GETs, alert ingestion and envelope
// ingestion at a fixed rate. Samples the server's RSS every SOAK_SAMPLE_SECONDS (default 10)
// and reports latency percentiles, answers other than 2xx and intended 429s, and whether
// memory is flat (the last fifth's RSS within SOAK_RSS_TOLERANCE, default 10 %, of the
// second fifth's: with 5 minutes, the last minute against the second). Exit 1 on failure.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { startServer } from '../test/helpers/server-process.js';

const TOKEN = 'bsp_soak-root-token-0123456789abcdef';

export interface SoakOptions {
  seconds: number;
  /** Requests per second over the whole mix. */
  rate: number;
  sampleSeconds: number;
  rssTolerance: number;
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface SoakReport {
  seconds: number;
  requests: number;
  byKind: Record<string, number>;
  statuses: Record<string, number>;
  /** Answers other than 2xx and 429, plus network errors. */
  errors: number;
  serverErrors: number;
  p50: number;
  p99: number;
  max: number;
  rssMiB: number[];
  /** Mean RSS of the second and the last fifth of the run, MiB. */
  rssSecond: number;
  rssLast: number;
  memoryFlat: boolean;
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kib / 1024;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const server = await startServer({
    BASALT_ROOT_TOKEN: TOKEN,
    BASALT_ROOT_PASSWORD: 'soak-password-123',
    // info: startServer waits for the "listening" line (and a real deployment logs requests).
    LOG_LEVEL: 'info',
    RUN_JOBS: 'false',
    // The load comes from one address to one key and one integration: without this the default
    // ingestion limits would answer most of it 429 and the soak would not exercise ingestion.
    RATE_LIMITS: 'sign_in=10/m,user_code=10/m',
    ...options.env,
  });
  const base = server.url;
  const pid = server.child.pid as number;
  try {
    const json = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${base}/api/v4${url}`, {
        method,
        headers: { 'private-token': TOKEN, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, string | number>>;
    };
    const project = await json('POST', '/projects', { name: 'soak', path: `soak-${Date.now()}` });
    const projectId = Number(project.id);
    const integration = await json('POST', `/projects/${projectId}/alert_management/integrations`, { name: 'soak', type: 'http' });
    await json('PUT', `/projects/${projectId}/error_tracking/settings`, { active: true, integrated: true });
    const keys = (await json('GET', `/projects/${projectId}/error_tracking/client_keys`)) as unknown as { public_key: string }[];
    const notifyUrl = `${base}${new URL(String(integration.url)).pathname}`;
    const envelopeUrl = `${base}/errortracking/api/v1/projects/api/${projectId}/envelope/`;
    const sentryKey = keys[0]?.public_key ?? '';

    let sequence = 0;
    const kinds = {
      get: () => fetch(`${base}/api/v4/projects/${projectId}`, { headers: { 'private-token': TOKEN } }),
      alert: () =>
        fetch(notifyUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${String(integration.token)}` },
          // A handful of recurring alerts: they group, as a real monitoring tool's would.
          body: JSON.stringify({ title: `soak alert ${sequence % 5}`, fingerprint: `soak-${sequence % 5}`, hosts: ['h1'] }),
        }),
      envelope: () => {
        const id = (Date.now() * 1000 + (sequence % 1000)).toString(16).padStart(32, '0');
        const event = JSON.stringify({ event_id: id, level: 'error', platform: 'node', message: `soak ${sequence % 20}` });
        return fetch(envelopeUrl, {
          method: 'POST',
          headers: { 'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${sentryKey}` },
          body: `${JSON.stringify({ event_id: id })}\n${JSON.stringify({ type: 'event', length: Buffer.byteLength(event) })}\n${event}\n`,
        });
      },
    };
    const names = Object.keys(kinds) as (keyof typeof kinds)[];
    const latencies: number[] = [];
    const statuses: Record<string, number> = {};
    const byKind: Record<string, number> = {};
    const rss: number[] = [rssOf(pid)];
    const inFlight = new Set<Promise<void>>();
    const started = Date.now();
    const end = started + options.seconds * 1000;
    const sampler = setInterval(() => {
      rss.push(rssOf(pid));
      log(`t=${Math.round((Date.now() - started) / 1000)}s rss=${rss.at(-1)?.toFixed(1)} MiB requests=${latencies.length}`);
    }, options.sampleSeconds * 1000);
    const interval = 1000 / options.rate;
    let next = started;
    while (Date.now() < end) {
      // Fixed rate, bounded concurrency: a slow server is not buried under a growing queue.
      if (inFlight.size < 64) {
        const kind = names[(sequence += 1) % names.length] as keyof typeof kinds;
        byKind[kind] = (byKind[kind] ?? 0) + 1;
        const t0 = performance.now();
        const p: Promise<void> = kinds[kind]()
          .then(async (res) => {
            await res.arrayBuffer();
            statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          })
          .catch(() => {
            statuses.network = (statuses.network ?? 0) + 1;
          })
          .finally(() => {
            latencies.push(performance.now() - t0);
            inFlight.delete(p);
          });
        inFlight.add(p);
      }
      next += interval;
      const wait = next - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    await Promise.all(inFlight);
    clearInterval(sampler);
    rss.push(rssOf(pid));
    const sorted = [...latencies].sort((a, b) => a - b);
    const fifth = Math.max(1, Math.floor(rss.length / 5));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const rssSecond = mean(rss.slice(fifth, 2 * fifth));
    const rssLast = mean(rss.slice(-fifth));
    const errors = Object.entries(statuses)
      .filter(([s]) => s === 'network' || !(Number(s) < 300 || Number(s) === 429))
      .reduce((n, [, c]) => n + c, 0);
    const serverErrors = Object.entries(statuses)
      .filter(([s]) => s === 'network' || Number(s) >= 500)
      .reduce((n, [, c]) => n + c, 0);
    return {
      seconds: Math.round((Date.now() - started) / 1000),
      requests: latencies.length,
      byKind,
      statuses,
      errors,
      serverErrors,
      p50: Math.round(percentile(sorted, 50) * 10) / 10,
      p99: Math.round(percentile(sorted, 99) * 10) / 10,
      max: Math.round((sorted.at(-1) ?? 0) * 10) / 10,
      rssMiB: rss.map((r) => Math.round(r * 10) / 10),
      rssSecond: Math.round(rssSecond * 10) / 10,
      rssLast: Math.round(rssLast * 10) / 10,
      memoryFlat: rssLast <= rssSecond * (1 + options.rssTolerance),
    };
  } finally {
    await server.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const report = await runSoak({
    seconds: Number(process.env.SOAK_SECONDS ?? 300),
    rate: Number(process.env.SOAK_RATE ?? 150),
    sampleSeconds: Number(process.env.SOAK_SAMPLE_SECONDS ?? 10),
    rssTolerance: Number(process.env.SOAK_RSS_TOLERANCE ?? 0.1),
    env: process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {},
    log: (line) => process.stdout.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  const ok = report.errors === 0 && report.memoryFlat;
  process.stdout.write(ok ? 'soak: passed\n' : 'soak: FAILED (errors other than 429, or memory grew)\n');
  process.exit(ok ? 0 : 1);
}
