// `npm run hostile-rss`: the built server (as `npm start` runs it) under hostile input over every
// route of its OpenAPI document (the fuzz suite's generators, over loopback): HOSTILE_REQUESTS
// requests (default 6000, drawn with HOSTILE_SEED, default 18), 16 at a time. Samples the server's RSS and V8 heap (from /-/metrics)
// and fails (exit 1) when RSS ever passes HOSTILE_RSS_LIMIT_MIB (default 300) or any answer is a
// 5xx. Figures are recorded in docs/performance.md.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { startServer } from '../test/helpers/server-process.js';
import { heavyBody, hostileBody, hostileQuery, hostileSegment } from '../test/helpers/hostile.js';

const TOKEN = 'bsp_hostile-root-token-0123456789abcdef';
// Routes that would lock the run out of the rest (blocking root, revoking its token).
const EXCLUDED = [/\/block$/, /\/unblock$/, /personal_access_tokens/, /impersonation_tokens/, /openapi\.json$/];

export interface HostileReport {
  requests: number;
  serverErrors: string[];
  statuses: Record<string, number>;
  rssMiB: number[];
  maxRssMiB: number;
  heapUsedMiB: number;
  seconds: number;
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

export async function runHostile(
  seed: number,
  requests: number,
  env: Record<string, string> = {},
  log: (line: string) => void = () => undefined,
  /** Heavy bodies per three ordinary hostile ones. */
  heavyWeight = 1,
  concurrency = 16,
): Promise<HostileReport> {
  const server = await startServer({
    BASALT_ROOT_TOKEN: TOKEN,
    BASALT_ROOT_PASSWORD: 'hostile-password-123',
    RUN_JOBS: 'false',
    // The V8 flags of `npm start` (package.json), which startServer does not pass itself.
    NODE_OPTIONS: '--max-semi-space-size=32',
    ...env,
  });
  const pid = server.child.pid as number;
  const base = server.url;
  try {
    const doc = (await (await fetch(`${base}/api/v4/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })))
      .filter((r) => !EXCLUDED.some((x) => x.test(r.path)));
    // By default one body in four is a heavy one: what costs memory is the parsing of big bodies.
    const body = fc.oneof({ arbitrary: hostileBody, weight: 3 }, { arbitrary: heavyBody, weight: heavyWeight });
    const cases = fc.sample(fc.tuple(fc.array(hostileSegment, { minLength: 3, maxLength: 3 }), hostileQuery, body), {
      numRuns: requests,
      seed,
    });
    const statuses: Record<string, number> = {};
    const serverErrors: string[] = [];
    const rss: number[] = [rssOf(pid)];
    const started = Date.now();
    const sampler = setInterval(() => rss.push(rssOf(pid)), 250);
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const index = next++;
        const [segments, params, input] = cases[index] as (typeof cases)[number];
        const route = routes[index % routes.length] as (typeof routes)[number];
        let i = 0;
        const path = route.path.replace(/\{[^}]+\}/g, () => segments[i++ % segments.length] ?? '1');
        const qs = params.map(([k, v]) => `${k}=${v}`).join('&');
        try {
          const res = await fetch(`${base}${path}${qs ? `?${qs}` : ''}`, {
            method: route.method,
            headers: {
              'private-token': TOKEN,
              'content-type': input.type,
              ...('encoding' in input && input.encoding ? { 'content-encoding': input.encoding } : {}),
            },
            ...(route.method === 'GET' || route.method === 'DELETE' || route.method === 'HEAD' ? {} : { body: input.payload }),
          });
          await res.arrayBuffer();
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status >= 500 && res.status !== 503) serverErrors.push(`${route.method} ${path}?${qs}: ${res.status}`);
        } catch (error) {
          statuses.network = (statuses.network ?? 0) + 1;
          log(`network error on ${route.method} ${path}: ${(error as Error).message}`);
        }
        if (index % 1000 === 0) log(`${index} requests, rss ${rss.at(-1)?.toFixed(1)} MiB`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    clearInterval(sampler);
    rss.push(rssOf(pid));
    const metrics = await (await fetch(`${base}/-/metrics`)).text();
    const heapUsed = Number(/^nodejs_heap_size_used_bytes (\d+(?:\.\d+)?)/m.exec(metrics)?.[1] ?? 0);
    return {
      requests,
      serverErrors,
      statuses,
      rssMiB: rss,
      maxRssMiB: Math.max(...rss),
      heapUsedMiB: heapUsed / 1024 / 1024,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await server.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const requests = Number(process.env.HOSTILE_REQUESTS ?? 6000);
  const limit = Number(process.env.HOSTILE_RSS_LIMIT_MIB ?? 300);
  const report = await runHostile(
    Number(process.env.HOSTILE_SEED ?? 18),
    requests,
    {},
    (line) => {
      process.stderr.write(`${line}\n`);
    },
    Number(process.env.HOSTILE_HEAVY_WEIGHT ?? 1),
    Number(process.env.HOSTILE_CONCURRENCY ?? 16),
  );
  process.stdout.write(
    `${JSON.stringify({ ...report, rssMiB: undefined, rssStartMiB: report.rssMiB[0], rssEndMiB: report.rssMiB.at(-1) }, null, 2)}\n`,
  );
  if (report.maxRssMiB > limit || report.serverErrors.length > 0) {
    process.stderr.write(
      `FAIL: max RSS ${report.maxRssMiB.toFixed(1)} MiB (limit ${limit}), ${report.serverErrors.length} server errors\n`,
    );
    process.exit(1);
  }
}
