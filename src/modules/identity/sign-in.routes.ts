import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rotateCsrf } from '../../infra/http/csrf.js';
import type { ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import { safeRedirectPath, sendPage, type FieldErrors } from '../../web/index.js';
import { profilePage, signInPage } from './identity.pages.js';
import type { PageAuth } from './page-auth.service.js';
import { SESSION_COOKIE } from './sessions.service.js';
import type { SignInService } from './sign-in.service.js';
import type { UsersService } from './users.service.js';

export interface SignInRouteDeps {
  platform: Platform;
  users: UsersService;
  signIn: SignInService;
  pageAuth: PageAuth;
}

/** Where a person lands after signing in when no page asked for it: the dashboard. */
export const HOME = '/';

const SignInQuery = Type.Object({ redirect_to: Type.Optional(Type.String({ maxLength: 2048 })) });
// `user[login]` arrives as that literal key (Rails' form naming, which password managers know).
const SignInForm = Type.Object({
  authenticity_token: Type.Optional(Type.String({ maxLength: 256 })),
  redirect_to: Type.Optional(Type.String({ maxLength: 2048 })),
  'user[login]': Type.String({ minLength: 1, maxLength: 255 }),
  'user[password]': Type.String({ minLength: 1, maxLength: 1024 }),
});
const SignOutForm = Type.Object({ authenticity_token: Type.Optional(Type.String({ maxLength: 256 })) });

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** `GET/POST /users/sign_in`, `POST /users/sign_out` (DESIGN.md §4) and the profile page, on the page layer. */
export function signInPages(web: ApiApp, { platform, users, signIn, pageAuth }: SignInRouteDeps): void {
  const { externalUrl } = platform.config;
  const redirectOf = (request: FastifyRequest, input: Record<string, unknown> = {}) =>
    safeRedirectPath(input.redirect_to) ?? safeRedirectPath((request.query as Record<string, unknown> | undefined)?.redirect_to);
  const form = (request: FastifyRequest, input: Record<string, unknown>, errors: FieldErrors, status?: string) =>
    signInPage({
      csrf: request.page.csrf,
      redirectTo: redirectOf(request, input),
      login: str(input['user[login]']),
      error: errors._ ?? status ?? (Object.keys(errors).length > 0 ? 'Enter your username or email and your password.' : undefined),
    });
  const answer = (request: FastifyRequest, reply: FastifyReply, input: Record<string, unknown>, error: string, code: number) =>
    sendPage(reply, form(request, input, { _: error }), code);

  web.get('/users/sign_in', { schema: { querystring: SignInQuery }, config: { page: { signIn: 'optional' } } }, async (request, reply) => {
    const redirectTo = redirectOf(request);
    if (request.page.actor) return reply.redirect(redirectTo ?? HOME, 302);
    return sendPage(reply, form(request, { redirect_to: redirectTo ?? undefined }, {}));
  });

  web.post(
    '/users/sign_in',
    { schema: { querystring: SignInQuery, body: SignInForm }, bodyLimit: 64 * 1024, config: { page: { signIn: 'optional', form } } },
    async (request, reply) => {
      const input = request.body as Record<string, unknown>;
      const redirectTo = redirectOf(request, input);
      const result = await signIn.signIn({
        login: request.body['user[login]'],
        password: request.body['user[password]'],
        ip: request.ip,
        userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
        previousSession: request.cookies[SESSION_COOKIE],
      });
      switch (result.kind) {
        case 'throttled': {
          const seconds = result.error.headers['retry-after'] ?? '60';
          reply.headers(result.error.headers);
          return answer(request, reply, input, `Too many failed sign-in attempts. Try again in ${seconds} seconds.`, 429);
        }
        case 'invalid':
          return answer(request, reply, input, 'Invalid login or password.', 401);
        case 'blocked':
          return answer(request, reply, input, 'Your account has been blocked. Contact your administrator.', 403);
        case 'signed_in':
          pageAuth.setSessionCookie(reply, result.session);
          // A new session gets a new CSRF secret too: tokens seen before sign-in stop working.
          rotateCsrf(request, reply, externalUrl);
          // 303, never 307, after a credential POST (RFC 9700 §4.12).
          return reply.redirect(redirectTo ?? HOME, 303);
      }
    },
  );

  web.post('/users/sign_out', { schema: { body: SignOutForm }, config: { page: { signIn: 'optional' } } }, async (request, reply) => {
    await signIn.signOut(request.cookies[SESSION_COOKIE]);
    pageAuth.clearSessionCookie(reply);
    rotateCsrf(request, reply, externalUrl);
    return reply.redirect('/users/sign_in', 303);
  });

  web.get('/profile', { config: { page: { signIn: 'required' } } }, async (request, reply) => {
    const user = await users.get(request.page.actor!.user.id);
    return sendPage(reply, profilePage(user, request.page));
  });
}
