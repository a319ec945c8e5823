import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

const API_PREFIX = '/api/v4/';

/**
 * Headers every response carries, and conditional GETs: a weak ETag from the body of each
 * 200 JSON answer under `/api/v4`, 304 when `If-None-Match` names it.
 */
export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-request-id', request.id);
    const type = String(reply.getHeader('content-type') ?? '');
    if (type.startsWith('text/html')) {
      reply.header('x-frame-options', 'DENY');
      if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', "frame-ancestors 'none'");
      reply.header('referrer-policy', 'strict-origin-when-cross-origin');
    } else {
      reply.header('x-frame-options', 'SAMEORIGIN');
    }
    if (request.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string' || !request.url.startsWith(API_PREFIX)) {
      return payload;
    }
    if (!type.startsWith('application/json')) return payload;
    const etag = `W/"${createHash('sha1').update(payload).digest('base64url')}"`;
    reply.header('etag', etag);
    const match = request.headers['if-none-match'];
    if (match && match.split(',').some((value) => value.trim() === etag || value.trim() === '*')) {
      reply.code(304);
      reply.removeHeader('content-length');
      return '';
    }
    return payload;
  });
}
