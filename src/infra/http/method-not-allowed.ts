import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MethodNotAllowedError, NotFoundError } from '../errors/index.js';
import { KnownRoutes } from './known-routes.js';

/** Answers a not-found request another way (the page layer's 404 page for a browser), or declines with null. */
export type NotFoundPage = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | null>;

/**
 * Fastify answers 404 for a known path with an unknown method; SPEC "Errors" wants 405 with
 * `Allow`. The known routes tell the not-found handler which methods the path has.
 */
export function installMethodNotAllowed(app: FastifyInstance, known?: KnownRoutes, notFoundPage?: NotFoundPage): void {
  const routes = known ?? new KnownRoutes();
  if (!known) routes.watch(app);
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = routes.allowed(path);
    if (allow.length > 0 && !allow.includes(request.method as (typeof allow)[number])) {
      throw new MethodNotAllowedError(allow.includes('GET') ? ['GET', 'HEAD', ...allow.filter((m) => m !== 'GET')] : allow);
    }
    const page = notFoundPage ? await notFoundPage(request, reply) : null;
    if (page) return page;
    throw new NotFoundError();
  });
}
