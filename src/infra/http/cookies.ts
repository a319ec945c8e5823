import { parseCookie, stringifySetCookie, type SerializeOptions } from 'cookie';
import type { FastifyInstance, FastifyReply } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's cookies, parsed on first read (most API requests never read them). */
    cookies: Record<string, string | undefined>;
  }
  interface FastifyReply {
    setCookie(name: string, value: string, options?: SerializeOptions): FastifyReply;
    clearCookie(name: string, options?: SerializeOptions): FastifyReply;
  }
}

const PARSED = Symbol('parsedCookies');
type WithParsed = { [PARSED]?: Record<string, string | undefined>; headers: { cookie?: string | undefined } };

/**
 * Cookies without a per-request hook: a token-authenticated API call pays nothing for
 * them. Parsing happens on the first read of `request.cookies`; `reply.setCookie` adds a
 * `Set-Cookie` line (Fastify keeps repeated `set-cookie` headers as a list).
 */
export function installCookies(app: FastifyInstance): void {
  app.decorateRequest('cookies', {
    getter(this: WithParsed) {
      let parsed = this[PARSED];
      if (!parsed) {
        const header = this.headers.cookie;
        parsed = header ? parseCookie(header) : {};
        this[PARSED] = parsed;
      }
      return parsed;
    },
  });
  app.decorateReply('setCookie', function setCookie(this: FastifyReply, name: string, value: string, options: SerializeOptions = {}) {
    return this.header('set-cookie', stringifySetCookie({ name, value, ...options }));
  });
  app.decorateReply('clearCookie', function clearCookie(this: FastifyReply, name: string, options: SerializeOptions = {}) {
    return this.header('set-cookie', stringifySetCookie({ path: '/', ...options, name, value: '', expires: new Date(0), maxAge: 0 }));
  });
}
