import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import type { Config } from '../../config/index.js';
import { csrfToken, secureCookies, verifyCsrf } from '../../infra/http/csrf.js';
import { SESSION_COOKIE, isSessionValue, type CreatedSession, type SessionsService } from './sessions.service.js';

/** The session cookie's value when it has a session's shape (what CSRF tokens are bound to). */
function sessionCookieOf(request: FastifyRequest): string | undefined {
  const value = request.cookies[SESSION_COOKIE];
  return isSessionValue(value) ? value : undefined;
}

/**
 * The session behind the page layer's ports (src/web/page-policy.ts PagePorts): who is signed
 * in, the CSRF token bound to that session, and the session cookie itself.
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
            ? { user: session.user, credential: { kind: 'session' as const, id: session.id, scopes: null }, ip: request.ip }
            : null,
        );
      this.resolved.set(request, actor);
    }
    return actor;
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
