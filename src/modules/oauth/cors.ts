import type { FastifyReply, FastifyRequest } from 'fastify';

export interface CorsRule {
  readonly methods: readonly string[];
  /** Request headers a preflight may ask for beyond the CORS-safelisted ones. */
  readonly headers: readonly string[];
}

/**
 * SPEC "CORS" and reference §2.11: any origin, never credentials, a short allow-list of
 * request headers (`X-Requested-With` is not on it). A preflight that asks for more gets no
 * CORS headers, so the browser refuses the request.
 */
export const CORS = {
  token: { methods: ['POST', 'OPTIONS'], headers: ['authorization'] },
  tokenInfo: { methods: ['GET', 'HEAD', 'OPTIONS'], headers: ['authorization'] },
  userinfo: { methods: ['GET', 'HEAD', 'POST', 'OPTIONS'], headers: ['authorization'] },
  discovery: { methods: ['GET', 'HEAD', 'OPTIONS'], headers: [] },
} as const satisfies Record<string, CorsRule>;

/** On an actual cross-origin request: allow any origin, no credentials. */
export function allowCors(request: FastifyRequest, reply: FastifyReply, rule: CorsRule): void {
  if (request.headers.origin === undefined) return;
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-allow-methods', rule.methods.join(', '));
  reply.header('vary', 'Origin');
}

export function answerPreflight(request: FastifyRequest, reply: FastifyReply, rule: CorsRule): FastifyReply {
  const method = String(request.headers['access-control-request-method'] ?? '').toUpperCase();
  const asked = String(request.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const allowed = request.headers.origin !== undefined && rule.methods.includes(method) && asked.every((h) => rule.headers.includes(h));
  if (allowed) {
    reply.header('access-control-allow-origin', '*');
    reply.header('access-control-allow-methods', rule.methods.join(', '));
    if (rule.headers.length > 0) reply.header('access-control-allow-headers', rule.headers.map(titleCase).join(', '));
    reply.header('access-control-max-age', '7200');
  }
  return reply.header('vary', 'Origin').code(204).send();
}

const titleCase = (name: string): string => name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
