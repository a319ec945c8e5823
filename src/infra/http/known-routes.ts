import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { FastifyInstance } from 'fastify';

export const ROUTED_METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Every registered path, in a router of its own, for questions Fastify's router does not
 * answer before routing: which methods a path allows (the 405's `Allow`), and whether a path
 * is any route's at all (the page addresses are rewritten only where none is).
 */
export class KnownRoutes {
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, maxParamLength: 1024 });

  /** Records the app's routes as they are registered; call before any route is added. */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD' || method === 'OPTIONS' || !ROUTED_METHODS.includes(method as HTTPMethod)) continue;
        try {
          this.router.on(method as HTTPMethod, route.url, () => undefined);
        } catch {
          // Already known (the same path under two plugins): nothing to add.
        }
      }
    });
  }

  /** The methods some route answers at `path` (no query string). */
  allowed(path: string): HTTPMethod[] {
    return ROUTED_METHODS.filter((method) => this.router.find(method, path) !== null);
  }

  /** Whether any route answers `path` in any method (GET first: most paths asked about are read). */
  has(path: string): boolean {
    return ROUTED_METHODS.some((method) => this.router.find(method, path) !== null);
  }
}
