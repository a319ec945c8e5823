import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { secureCookies } from '../infra/http/csrf.js';
import { MovedPermanentlyError, UnauthorizedError } from '../infra/errors/index.js';
import { prettyPageUrl } from './page-paths.js';
import { toSignIn } from './sign-in-path.js';
import { takeFlash, writeFlash } from './flash.js';
import { sendPage } from './layout.js';
import { AdminRequiredError, RoleRequiredError, pageErrorHandler, renderErrorPage } from './page-errors.js';
import type { Flash, PagePorts, PageResource, PageState } from './page-policy.js';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const EXPIRED = 'This form has expired. Reload the page and try again.';

declare module 'fastify' {
  interface FastifyReply {
    /** Redirects (303) with a message the next page shows once. */
    redirectWithFlash(url: string, flash: Flash): FastifyReply;
  }
}

const paramOf = (request: FastifyRequest, name: string): string | undefined => {
  const value = (request.params as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * The web application's one page layer, installed on the scope that holds every page route.
 * A page route declares `config.page` (page-policy.ts); before its schema is checked, one hook
 * resolves the signed-in person, sends visitors who must sign in to the sign-in page, refuses
 * a form without its session's CSRF token, and resolves the project or group at the declared
 * role through the same access rules as the API. One error handler answers every refusal as a
 * page in the layout. Handlers read `request.page` and never check any of this again.
 */
export function installPageLayer(scope: FastifyInstance, ports: PagePorts): void {
  const secure = secureCookies(ports.externalUrl);
  scope.addHook('onRoute', (route) => {
    if (!route.config?.page) throw new Error(`page route ${String(route.method)} ${route.url} declares no page policy`);
    // The API's credential hook does not run for pages: the page layer reads the session itself.
    route.config = { ...route.config, policy: { auth: 'none' } };
  });
  scope.decorateReply('redirectWithFlash', function (this: FastifyReply, url: string, flash: Flash) {
    writeFlash(this, ports.secretKeyBase, secure, flash);
    return this.redirect(url, 303);
  });
  scope.setErrorHandler(pageErrorHandler());

  scope.addHook('preValidation', async (request, reply) => {
    const policy = request.routeOptions.config.page!;
    const actor = await ports.currentUser(request);
    request.actor = actor;
    const state: { -readonly [K in keyof PageState]: PageState[K] } = {
      actor,
      csrf: ports.csrfToken(request, reply),
      project: null,
      group: null,
      flash: request.method === 'GET' ? takeFlash(request, reply, ports.secretKeyBase, secure) : null,
    };
    request.page = state;
    if (!actor && policy.signIn === 'required') return toSignIn(request, reply);
    // 422 as the established product answers a bad authenticity token; a form keeps what was typed.
    const expired = UNSAFE.has(request.method) && !ports.verifyCsrf(request);
    if (expired && !policy.form) return renderErrorPage(request, reply, 422, EXPIRED);
    if (policy.admin && !actor?.user.isAdmin) throw actor ? new AdminRequiredError() : new RoleRequiredError('Administrator');
    if (policy.project !== undefined)
      state.project = await resolve(request, 'project', policy.project, (r, ref, level) => ports.project(r, ref, level));
    if (policy.group !== undefined)
      state.group = await resolve(request, 'group', policy.group, (r, ref, level) => ports.group(r, ref, level));
    if (expired && policy.form) {
      // Drawn once the project or group is resolved: the form of a project page shows it.
      const input = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
      return sendPage(reply, await policy.form(request, input, { _: EXPIRED }), 422);
    }
    return undefined;
  });
}

async function resolve(
  request: FastifyRequest,
  param: string,
  level: number,
  find: (request: FastifyRequest, ref: string, minLevel: number) => Promise<PageResource>,
): Promise<PageResource> {
  const ref = paramOf(request, param);
  if (ref === undefined) throw new Error(`a page policy names the ${param} but the route has no :${param} parameter`);
  try {
    return await find(request, ref, level);
  } catch (error) {
    const status = (error as { status?: number }).status;
    // A renamed project or group: the API's redirect names the internal address; a browser goes to the established one.
    const location = (error as { headers?: Record<string, string> }).headers?.location;
    if (status === 301 && location) throw new MovedPermanentlyError(prettyPageUrl(location));
    // What a visitor cannot see may be there for someone signed in: sign in first, as the established product does.
    if (!request.actor && (status === 404 || status === 403)) throw new UnauthorizedError();
    // The API's 403 carries no role; the page says which one it needs.
    if (status === 403) throw RoleRequiredError.forLevel(level);
    throw error;
  }
}
