import type { FastifyReply, FastifyRequest } from 'fastify';

/** What a cross-origin caller may do on a route: any origin, never credentials. */
export interface CorsRule {
  readonly methods: readonly string[];
  /** Request headers a preflight may ask for beyond the CORS-safelisted ones, as they are announced. */
  readonly headers: readonly string[];
  /** Response headers a page may read beyond the CORS-safelisted ones. */
  readonly exposed?: readonly string[];
}

/** On an actual cross-origin request: allow any origin, no credentials. */
export function allowCors(request: FastifyRequest, reply: FastifyReply, rule: CorsRule): void {
  if (request.headers.origin === undefined) return;
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-allow-methods', rule.methods.join(', '));
  if (rule.exposed?.length) reply.header('access-control-expose-headers', rule.exposed.join(', '));
  reply.header('vary', 'Origin');
}

/**
 * A preflight: 204, with the CORS headers only when the method and every asked header are
 * allowed (header names compare without case), so the browser refuses anything else.
 */
export function answerPreflight(request: FastifyRequest, reply: FastifyReply, rule: CorsRule): FastifyReply {
  const method = String(request.headers['access-control-request-method'] ?? '').toUpperCase();
  const asked = String(request.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const allowedHeaders = rule.headers.map((h) => h.toLowerCase());
  const allowed = request.headers.origin !== undefined && rule.methods.includes(method) && asked.every((h) => allowedHeaders.includes(h));
  if (allowed) {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-allow-methods', rule.methods.join(', '));
    if (rule.headers.length > 0) reply.header('access-control-allow-headers', rule.headers.join(', '));
    if (rule.exposed?.length) reply.header('access-control-expose-headers', rule.exposed.join(', '));
    reply.header('access-control-max-age', '7200');
  }
  return reply.header('vary', 'Origin').code(204).send();
}
