import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { serverMetricsReader } from '../../infra/http/cluster-metrics.js';
import type { Platform } from '../../infra/platform.js';
import type { OpenApiCollector } from './openapi.js';

export { OpenApiCollector } from './openapi.js';

/** Probes for load balancers and orchestrators, metrics, and the OpenAPI document. */
export function operationsRoutes(
  app: FastifyInstance,
  platform: Platform,
  metrics: Registry,
  openapi: OpenApiCollector,
  version: string,
  overloaded: () => boolean,
): void {
  const none = { policy: { auth: 'none' as const } };
  app.get('/-/health', { config: none }, async () => ({ status: 'ok' }));
  app.get('/-/liveness', { config: none }, async () => ({ status: 'ok' }));
  app.get('/-/readiness', { config: none }, async (_request, reply) => {
    const checks: Record<string, { status: string; message?: string }> = {};
    try {
      await platform.database.ping();
      checks.database = { status: 'ok' };
    } catch (error) {
      checks.database = { status: 'failed', message: (error as Error).message };
    }
    checks.load = overloaded() ? { status: 'failed', message: 'shedding load' } : { status: 'ok' };
    const ok = Object.values(checks).every((c) => c.status === 'ok');
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'failed', checks });
  });
  const readMetrics = serverMetricsReader(metrics);
  app.get('/-/metrics', { config: none }, async (_request, reply) => {
    return reply.type(metrics.contentType).send(await readMetrics());
  });
  let cached: string | null = null;
  app.get('/api/v4/openapi.json', { config: none }, async (_request, reply) => {
    cached ??= JSON.stringify(openapi.document(version));
    return reply.type('application/json; charset=utf-8').send(cached);
  });
}
