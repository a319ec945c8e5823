// Runs one autocannon load in its own process (so the load generator never shares the
// server's event loop) and prints the result as JSON on stdout.
import autocannon from 'autocannon';
import { factories } from './request-factories.js';
import type { LoadRequest } from './scenarios.js';

interface LoadOptions {
  /** Which load of this target this is (0 = warm-up), for generators that use up their inputs. */
  round: number;
  url: string;
  connections: number;
  duration: number;
  request: LoadRequest;
}

/** What this process prints when its load is done (one JSON line after `started`). */
export interface LoadResult {
  requests: number;
  total: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** The statuses of the answers, by code, when some were not 2xx. */
  statuses?: Record<string, { count: number }>;
}

const options = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
const { request } = options;
const factory = request.factory ? factories[request.factory.name] : undefined;
if (request.factory && !factory) throw new Error(`unknown request factory ${request.factory.name}`);
/** The factory's per-request hooks in autocannon's shape (a plain setupRequest, or with onResponse). */
function generator(): Partial<autocannon.Request> {
  if (!factory || !request.factory) return {};
  const made = factory({ ...request.factory.args, round: options.round });
  if (typeof made === 'function') return { setupRequest: made as unknown as autocannon.Request['setupRequest'] };
  return {
    setupRequest: made.setupRequest as unknown as autocannon.Request['setupRequest'],
    ...(made.onResponse ? { onResponse: made.onResponse as unknown as autocannon.Request['onResponse'] } : {}),
  };
}

// The parent reads each server's CPU time when this line arrives, so what a server does before the
// load begins (this process's own start-up takes a second) is not divided by the load's requests.
process.stdout.write('started\n');
const result = await autocannon({
  url: options.url,
  connections: options.connections,
  duration: options.duration,
  method: request.method,
  headers: { 'content-type': 'application/json', ...request.headers },
  ...(request.body !== undefined ? { body: request.body } : {}),
  requests: [
    {
      method: request.method,
      path: request.path,
      ...generator(),
    },
  ],
});
const printed: LoadResult = {
  requests: result.requests.average,
  total: result.requests.total,
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  // Which statuses the non-2xx answers were (a 429 and a 500 are different findings).
  ...(result.non2xx > 0
    ? { statuses: (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {} }
    : {}),
};
process.stdout.write(`${JSON.stringify(printed)}\n`);
