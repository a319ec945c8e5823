import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rotateCsrf } from '../../infra/http/csrf.js';
import type { Platform } from '../../infra/platform.js';
import { sendPage } from '../../web/layout.js';
import { profilePage, signInPage, type SignInPageProps } from './identity.pages.js';
import { safeRedirect, type PageAuth } from './page-auth.js';
import { SESSION_COOKIE } from './sessions.service.js';
import type { SignInService } from './sign-in.service.js';
import type { UsersService } from './users.service.js';

export interface SignInRouteDeps {
  platform: Platform;
  users: UsersService;
  signIn: SignInService;
  pageAuth: PageAuth;
}

const HOME = '/profile';
const page = { config: { policy: { auth: 'none' as const } } };

/** A bounded string field of a form body (`user[login]` arrives as that literal key). */
function field(request: FastifyRequest, name: string, max: number): string | undefined {
  const body = request.body as Record<string, unknown> | null | undefined;
  const value = body && typeof body === 'object' ? body[name] : undefined;
  return typeof value === 'string' && value.length <= max ? value : undefined;
}

function queryRedirect(request: FastifyRequest): string | null {
  const query = request.query as Record<string, unknown> | undefined;
  return safeRedirect(query?.redirect_to);
}

/** `GET/POST /users/sign_in`, `POST /users/sign_out` (DESIGN.md §4) and the profile page. */
export function signInRoutes(app: FastifyInstance, { platform, users, signIn, pageAuth }: SignInRouteDeps): void {
  const { externalUrl } = platform.config;
  const render = (request: FastifyRequest, reply: FastifyReply, props: Omit<SignInPageProps, 'csrf'>, status = 200) =>
    sendPage(reply, signInPage({ ...props, csrf: pageAuth.pageCsrf(request, reply) }), status);

  app.get('/users/sign_in', page, async (request, reply) => {
    const redirectTo = queryRedirect(request);
    if (await pageAuth.currentUser(request)) return reply.redirect(redirectTo ?? HOME, 302);
    return render(request, reply, { redirectTo });
  });

  app.post('/users/sign_in', page, async (request, reply) => {
    const redirectTo = safeRedirect(field(request, 'redirect_to', 2048)) ?? queryRedirect(request);
    const login = field(request, 'user[login]', 255) ?? '';
    if (!pageAuth.verifyPageCsrf(request)) {
      return render(request, reply, { redirectTo, login, error: 'Your session has expired. Please sign in again.' }, 422);
    }
    const result = await signIn.signIn({
      login,
      password: field(request, 'user[password]', 1024) ?? '',
      ip: request.ip,
      userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
      previousSession: request.cookies[SESSION_COOKIE],
    });
    switch (result.kind) {
      case 'throttled': {
        const seconds = result.error.headers['retry-after'] ?? '60';
        reply.headers(result.error.headers);
        return render(
          request,
          reply,
          { redirectTo, login, error: `Too many failed sign-in attempts. Try again in ${seconds} seconds.` },
          429,
        );
      }
      case 'invalid':
        return render(request, reply, { redirectTo, login, error: 'Invalid login or password.' }, 401);
      case 'blocked':
        return render(request, reply, { redirectTo, login, error: 'Your account has been blocked. Contact your administrator.' }, 403);
      case 'signed_in':
        pageAuth.setSessionCookie(reply, result.session);
        // A new session gets a new CSRF secret too: tokens seen before sign-in stop working.
        rotateCsrf(request, reply, externalUrl);
        // 303, never 307, after a credential POST (RFC 9700 §4.12).
        return reply.redirect(redirectTo ?? HOME, 303);
    }
  });

  app.post('/users/sign_out', page, async (request, reply) => {
    if (!pageAuth.verifyPageCsrf(request)) {
      return render(request, reply, { redirectTo: null, error: 'Your session has expired. Sign out again from a fresh page.' }, 422);
    }
    await signIn.signOut(request.cookies[SESSION_COOKIE]);
    pageAuth.clearSessionCookie(reply);
    rotateCsrf(request, reply, externalUrl);
    return reply.redirect('/users/sign_in', 303);
  });

  app.get(HOME, page, async (request, reply) => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return reply;
    const user = await users.get(actor.user.id);
    return sendPage(reply, profilePage(user, pageAuth.pageCsrf(request, reply)));
  });
}
