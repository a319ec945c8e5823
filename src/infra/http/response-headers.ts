import { hash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

const API_PREFIX = '/api/v4/';

/** The weak ETag of a JSON body under `/api/v4`. */
export function weakEtag(payload: string): string {
  return `W/"${hash('sha1', payload, 'base64url')}"`;
}

/**
 * Headers every response carries, and conditional GETs: a weak ETag from the body of each
 * 200 JSON answer under `/api/v4`, 304 when `If-None-Match` names it.
 */
export function installResponseHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: it never waits, and a promise per response is a
  // measurable share of a cached API read.
  app.addHook('onSend', (request, reply, payload, done) => {
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
    const conditional =
      request.method === 'GET' &&
      reply.statusCode === 200 &&
      typeof payload === 'string' &&
      request.url.startsWith(API_PREFIX) &&
      type.startsWith('application/json');
    if (!conditional) {
      done(null, payload);
      return;
    }
    // A route that answers prebuilt bytes sets their ETag itself (computed once with them).
    const preset = reply.getHeader('etag');
    const etag = typeof preset === 'string' ? preset : weakEtag(payload);
    if (preset === undefined) reply.header('etag', etag);
    const match = request.headers['if-none-match'];
    if (match && match.split(',').some((value) => value.trim() === etag || value.trim() === '*')) {
      reply.code(304);
      reply.removeHeader('content-length');
      done(null, '');
      return;
    }
    done(null, payload);
  });
}
