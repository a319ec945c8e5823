import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MethodNotAllowedError, NotFoundError, type AppError } from '../errors/index.js';
import type { KnownRoutes } from './known-routes.js';

/** Answers the 404 or 405 another way (the page layer's page for a browser), or declines with null. */
export type BrowserRefusal = (request: FastifyRequest, reply: FastifyReply, error: AppError) => Promise<FastifyReply | null>;

/**
 * Fastify answers 404 for a known path with an unknown method; SPEC "Errors" wants 405 with
 * `Allow`. The known routes tell the not-found handler which methods the path has.
 */
export function installMethodNotAllowed(app: FastifyInstance, known: KnownRoutes, browserRefusal?: BrowserRefusal): void {
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = known.allowed(path);
    const error =
      allow.length > 0 && !allow.includes(request.method as (typeof allow)[number])
        ? new MethodNotAllowedError(allow.includes('GET') ? ['GET', 'HEAD', ...allow.filter((m) => m !== 'GET')] : allow)
        : new NotFoundError();
    const page = browserRefusal ? await browserRefusal(request, reply, error) : null;
    if (page) return page;
    throw error;
  });
}
