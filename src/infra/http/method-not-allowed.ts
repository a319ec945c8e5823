import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { MethodNotAllowedError, NotFoundError } from '../errors/index.js';

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Fastify answers 404 for a known path with an unknown method; SPEC "Errors" wants 405 with
 * `Allow`. A second router holds every registered path so the not-found handler can tell.
 */
export function installMethodNotAllowed(app: FastifyInstance): void {
  const shadow = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1024 });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD' || method === 'OPTIONS' || !METHODS.includes(method as HTTPMethod)) continue;
      try {
        shadow.on(method as HTTPMethod, route.url, () => undefined);
      } catch {
        // Already known (the same path under two plugins): nothing to add.
      }
    }
  });
  app.setNotFoundHandler((request: FastifyRequest, _reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = METHODS.filter((m) => shadow.find(m, path) !== null);
    if (allow.length > 0 && !allow.includes(request.method as HTTPMethod)) {
      throw new MethodNotAllowedError(allow.includes('GET') ? ['GET', 'HEAD', ...allow.filter((m) => m !== 'GET')] : allow);
    }
    throw new NotFoundError();
  });
}
