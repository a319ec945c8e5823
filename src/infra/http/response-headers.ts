import { hash } from 'node:crypto';
import type { FastifyInstance, onSendHookHandler } from 'fastify';

const API_PREFIX = '/api/v4/';
/** What Fastify and our error handlers set for an object body. */
const JSON_UTF8 = 'application/json; charset=utf-8';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The answer carries a secret shown once (a new or rotated token, a client secret): it gets
     * `Cache-Control: no-store`, so no cache, proxy or browser history keeps it.
     */
    secret?: boolean;
  }
}

/**
 * The Content-Security-Policy of every HTML answer. Pages are server-rendered with one
 * stylesheet and one same-origin script file (/-/static/basalt.js, copy buttons), so nothing else
 * may load: no inline script, no eval, no script from elsewhere, no inline style, no plugin, no
 * `<base>` rewrite, and no framing (RFC 9700 §4.16). Same-origin requests stay allowed
 * (`connect-src 'self'`: a signed-in page may call the API). `form-action` is left out on purpose:
 * the consent form's answer redirects to the client's own URI, which browsers would check against
 * it (docs/decisions.md).
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'";
/** Two years, as the established product's bundled nginx sends when it serves https. */
const HSTS = 'max-age=63072000';

const noStore: onSendHookHandler = (_request, reply, payload, done) => {
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
  done(null, payload);
};

/** The weak ETag of a JSON body under `/api/v4`. */
export function weakEtag(payload: string): string {
  return `W/"${hash('sha1', payload, 'base64url')}"`;
}

/**
 * Headers every response carries, and conditional GETs: a weak ETag from the body of each
 * 200 JSON answer under `/api/v4`, 304 when `If-None-Match` names it. With an https
 * EXTERNAL_URL every answer also asks browsers to use https only (HSTS). Routes whose config
 * says `secret: true` get `no-store` through a hook of their own, which other routes never run.
 */
export function installResponseHeaders(app: FastifyInstance, options: { externalUrl: string }): void {
  const hsts = options.externalUrl.startsWith('https://');
  app.addHook('onRoute', (route) => {
    if (route.config?.secret !== true) return;
    const existing = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...existing, noStore];
  });
  // A callback hook, not an async one: it never waits, and a promise per response is a
  // measurable share of a cached API read.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-request-id', request.id);
    if (hsts) reply.header('strict-transport-security', HSTS);
    const type = String(reply.getHeader('content-type') ?? '');
    const api = request.url.startsWith(API_PREFIX);
    // The established product's media type, exactly: python-gitlab decodes a body only when the
    // header is `application/json` (issue 19). Every /api/v4 answer, errors included, passes here.
    if (api && type === JSON_UTF8) reply.header('content-type', 'application/json');
    if (type.startsWith('text/html')) {
      reply.header('x-frame-options', 'DENY');
      reply.header('content-security-policy', PAGE_CSP);
      reply.header('referrer-policy', 'strict-origin-when-cross-origin');
    } else {
      reply.header('x-frame-options', 'SAMEORIGIN');
    }
    const conditional =
      request.method === 'GET' && reply.statusCode === 200 && typeof payload === 'string' && api && type.startsWith('application/json');
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
