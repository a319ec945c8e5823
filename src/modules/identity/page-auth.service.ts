import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import type { Config } from '../../config/index.js';
import { csrfToken, secureCookies, verifyCsrf } from '../../infra/http/csrf.js';
import { SESSION_COOKIE, isSessionValue, type CreatedSession, type SessionsService } from './sessions.service.js';

const REDIRECT_MAX = 2048;

function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * A `redirect_to` worth following: a same-site path starting with exactly one `/`. Anything
 * else (absolute URLs, `//host`, backslashes that browsers read as slashes, control
 * characters) is ignored, so the sign-in page is never an open redirect (RFC 9700 §4.11).
 */
export function safeRedirect(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > REDIRECT_MAX) return null;
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\s]/.test(value) || hasControlCharacter(value)) return null;
  try {
    const url = new URL(value, 'http://same.invalid');
    return url.origin === 'http://same.invalid' ? value : null;
  } catch {
    return null;
  }
}

/** The session cookie's value when it has a session's shape (what CSRF tokens are bound to). */
function sessionCookieOf(request: FastifyRequest): string | undefined {
  const value = request.cookies[SESSION_COOKIE];
  return isSessionValue(value) ? value : undefined;
}

export function signInPath(redirectTo?: string | null): string {
  return redirectTo ? `/users/sign_in?redirect_to=${encodeURIComponent(redirectTo)}` : '/users/sign_in';
}

/**
 * What page routes of any module use for the signed-in person (pages declare
 * `policy: { auth: 'none' }`, so the API's auth hook does not run for them):
 *
 *   const actor = await identity.pageAuth.requireSignedIn(request, reply);
 *   if (!actor) return reply;                       // a redirect to the sign-in page was sent
 *   const csrf = identity.pageAuth.pageCsrf(request, reply);   // for every form on the page
 *   // in the form POST handler:
 *   if (!identity.pageAuth.verifyPageCsrf(request)) ... answer 422 and re-render
 *
 * After signing in, the browser comes back to the page it asked for (`redirect_to`).
 */
export class PageAuth {
  private readonly resolved = new WeakMap<FastifyRequest, Promise<Actor | null>>();

  constructor(
    private readonly sessions: SessionsService,
    private readonly config: Config,
  ) {}

  /** The person signed in through the session cookie, or null; looked up once per request. */
  currentUser(request: FastifyRequest): Promise<Actor | null> {
    let actor = this.resolved.get(request);
    if (!actor) {
      actor = this.sessions
        .resolve(request.cookies[SESSION_COOKIE])
        .then((session) =>
          session && session.user.state !== 'blocked' && !session.user.bot
            ? { user: session.user, credential: { kind: 'session' as const, id: session.id, scopes: null } }
            : null,
        );
      this.resolved.set(request, actor);
    }
    return actor;
  }

  /** The signed-in actor, or null after sending a redirect to `/users/sign_in?redirect_to=<this page>`. */
  async requireSignedIn(request: FastifyRequest, reply: FastifyReply): Promise<Actor | null> {
    const actor = await this.currentUser(request);
    if (actor) return actor;
    const back = request.method === 'GET' || request.method === 'HEAD' ? safeRedirect(request.url) : null;
    void reply.redirect(signInPath(back), request.method === 'GET' || request.method === 'HEAD' ? 302 : 303);
    return null;
  }

  /** The CSRF token to put in every form of the page (`authenticity_token`), bound to the browser's session. */
  pageCsrf(request: FastifyRequest, reply: FastifyReply): string {
    return csrfToken(request, reply, this.config.secretKeyBase, this.config.externalUrl, sessionCookieOf(request));
  }

  /**
   * True when a form POST (or an API call with the session cookie) carries the CSRF token of
   * its own session (field or `X-CSRF-Token` header): a token from another session is refused.
   */
  verifyPageCsrf(request: FastifyRequest): boolean {
    return verifyCsrf(request, this.config.secretKeyBase, sessionCookieOf(request));
  }

  setSessionCookie(reply: FastifyReply, session: CreatedSession): void {
    reply.setCookie(SESSION_COOKIE, session.secret, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: secureCookies(this.config.externalUrl),
      expires: new Date(session.endsAt),
    });
  }

  clearSessionCookie(reply: FastifyReply): void {
    reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(this.config.externalUrl) });
  }
}
