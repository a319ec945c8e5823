import type { FastifyReply, FastifyRequest } from 'fastify';
import { Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

export interface RequestMetrics {
  readonly registry: Registry;
  /** Counts one finished request and its latency under its route's labels. */
  record(request: FastifyRequest, reply: FastifyReply): void;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const REQUESTS = { name: 'http_requests_total', help: 'HTTP requests by method, route and status', type: 'counter', aggregator: 'sum' };
const LATENCY = {
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency by method and route',
  type: 'histogram',
  aggregator: 'sum',
};

interface RouteTiming {
  labels: { method: string; route: string };
  /** Observations per bucket (not cumulative), the last slot being +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * `http_requests_total` and `http_request_duration_seconds`, kept in plain counters and
 * handed to prom-client's registry as metrics in its own shape. prom-client's label
 * objects are validated and hashed on every observation: a measurable share of a cached
 * API read (docs/perf-lab.md); here a request costs two map lookups and additions.
 */
export function createRequestMetrics(): RequestMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counts = new Map<string, { labels: { method: string; route: string; status: string }; value: number }>();
  const timings = new Map<string, RouteTiming>();

  const requestsMetric = {
    ...REQUESTS,
    get: async () => ({
      ...REQUESTS,
      values: [...counts.values()].map((c): MetricValue => ({ labels: { ...c.labels }, value: c.value })),
    }),
    reset: () => counts.clear(),
  };
  const latencyMetric = {
    ...LATENCY,
    get: async () => ({ ...LATENCY, values: [...timings.values()].flatMap(histogramValues) }),
    reset: () => timings.clear(),
  };
  registry.registerMetric(requestsMetric as unknown as Metric);
  registry.registerMetric(latencyMetric as unknown as Metric);

  return {
    registry,
    record(request, reply) {
      const method = request.method;
      const route = request.routeOptions.url ?? 'unmatched';
      const status = reply.statusCode;
      const routeKey = `${method} ${route}`;
      const countKey = `${routeKey} ${status}`;
      const counted = counts.get(countKey);
      if (counted) counted.value += 1;
      else counts.set(countKey, { labels: { method, route, status: String(status) }, value: 1 });
      let timing = timings.get(routeKey);
      if (!timing) {
        timing = { labels: { method, route }, buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 };
        timings.set(routeKey, timing);
      }
      const seconds = reply.elapsedTime / 1000;
      let slot = 0;
      while (slot < BUCKETS.length && seconds > (BUCKETS[slot] as number)) slot += 1;
      (timing.buckets[slot] as number) += 1;
      timing.sum += seconds;
      timing.count += 1;
    },
  };
}

/** One route's histogram as prom-client lists it: cumulative buckets, +Inf, sum and count. */
function histogramValues(timing: RouteTiming): MetricValue[] {
  const name = LATENCY.name;
  const values: MetricValue[] = [];
  let cumulative = 0;
  BUCKETS.forEach((le, i) => {
    cumulative += timing.buckets[i] as number;
    values.push({ labels: { ...timing.labels, le }, value: cumulative, metricName: `${name}_bucket` });
  });
  values.push({ labels: { ...timing.labels, le: '+Inf' }, value: timing.count, metricName: `${name}_bucket` });
  values.push({ labels: { ...timing.labels }, value: timing.sum, metricName: `${name}_sum` });
  values.push({ labels: { ...timing.labels }, value: timing.count, metricName: `${name}_count` });
  return values;
}

const OUTBOX_STATES = ['pending', 'failed', 'sent', 'dead'] as const;

/**
 * `basalt_outbox_items{kind,state}`: the outbox's items per kind and state (pending, failed,
 * sent, dead), read from the database at each scrape. Every worker reads the same table, so
 * under `WORKERS=N` the primary keeps one worker's value (`max`) instead of summing N copies.
 */
export function registerOutboxMetrics(registry: Registry, counts: () => Promise<Array<{ kind: string; state: string; n: number }>>): void {
  new Gauge({
    name: 'basalt_outbox_items',
    help: 'Outbox items (mail, webhook deliveries) by kind and state',
    labelNames: ['kind', 'state'],
    aggregator: 'max',
    registers: [registry],
    async collect() {
      this.reset();
      const rows = await counts().catch(() => []);
      for (const kind of new Set(rows.map((row) => row.kind))) {
        for (const state of OUTBOX_STATES) this.set({ kind, state }, 0);
      }
      for (const row of rows) this.set({ kind: row.kind, state: row.state }, row.n);
    },
  });
}
