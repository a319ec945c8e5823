import { BlockList, isIPv6 } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../infra/errors/index.js';
import { serverMetricsReader } from '../../infra/http/cluster-metrics.js';
import type { Platform } from '../../infra/platform.js';
import { OpenApiDocument } from './openapi.service.js';
import type { OperationsModuleDeps } from './operations.deps.js';
import * as S from './operations.schemas.js';

/**
 * MONITORING_ALLOWLIST as a matcher of client addresses. `request.ip` is the client's address,
 * or behind a TRUST_PROXY proxy the one it forwarded; an IPv4-mapped IPv6 address matches its
 * IPv4 range.
 */
export function monitoringAllowed(ranges: readonly string[]): (request: FastifyRequest) => boolean {
  const list = new BlockList();
  for (const range of ranges) {
    const [address = '', bits = ''] = range.split('/');
    list.addSubnet(address, Number(bits), isIPv6(address) ? 'ipv6' : 'ipv4');
  }
  return (request) => {
    const ip = request.ip;
    try {
      return list.check(ip, isIPv6(ip) ? 'ipv6' : 'ipv4');
    } catch {
      return false;
    }
  };
}

/**
 * Probes for load balancers and orchestrators, metrics, and the OpenAPI document. Metrics and
 * the readiness checks' details say how the instance is built and how loaded it is: they answer
 * only to MONITORING_ALLOWLIST, and others get the 404 of an unknown path, as the established
 * product answers; readiness's status code stays public for load balancers.
 */
export function operationsRoutes(
  app: FastifyInstance,
  platform: Platform,
  { metrics, openapi, version, overloaded }: OperationsModuleDeps,
): void {
  const none = { policy: { auth: 'none' as const } };
  const allowed = monitoringAllowed(platform.config.monitoringAllowlist);
  const tags = ['operations'];
  const health = { summary: 'Answers while the process runs', tags, response: { 200: S.Health } };
  app.get('/-/health', { config: none, schema: health }, async () => ({ status: 'ok' }));
  app.get('/-/liveness', { config: none, schema: health }, async () => ({ status: 'ok' }));
  const readiness = {
    summary: 'Says whether the instance can serve requests (database, load)',
    tags,
    response: { 200: S.Readiness },
  };
  app.get('/-/readiness', { config: none, schema: readiness }, async (request, reply) => {
    const checks: Record<string, { status: string; message?: string }> = {};
    try {
      await platform.database.ping();
      checks.database = { status: 'ok' };
    } catch (error) {
      checks.database = { status: 'failed', message: (error as Error).message };
    }
    checks.load = overloaded() ? { status: 'failed', message: 'shedding load' } : { status: 'ok' };
    const ok = Object.values(checks).every((c) => c.status === 'ok');
    const status = ok ? 'ok' : 'failed';
    // Only 200 is declared: a 503 is this body or the load shedder's `{message}`, and a 503
    // schema would refuse to serialise the latter.
    return (reply as FastifyReply).code(ok ? 200 : 503).send(allowed(request) ? { status, checks } : { status });
  });
  const readMetrics = serverMetricsReader(metrics);
  app.get('/-/metrics', { config: none }, async (request, reply) => {
    if (!allowed(request)) throw new NotFoundError();
    return reply.type(metrics.contentType).send(await readMetrics());
  });
  let cached: string | null = null;
  const documentSchema = {
    summary: 'The OpenAPI 3.1 document of this API',
    tags: ['operations'],
    operationId: 'getOpenApiDocument',
    response: { 200: OpenApiDocument },
  };
  app.get('/api/v4/openapi.json', { config: none, schema: documentSchema }, async (_request, reply) => {
    cached ??= JSON.stringify(openapi.document(version));
    return reply.type('application/json; charset=utf-8').send(cached);
  });
}
