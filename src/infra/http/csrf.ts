import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../crypto.js';

/** The cookie that carries the pre-session CSRF secret (the sign-in form's, HMAC-bound). */
export const CSRF_COOKIE = '_basalt_csrf';
/** Form field and header names for the token (the header is what API callers with a session send). */
export const CSRF_FIELD = 'authenticity_token';
export const CSRF_HEADER = 'x-csrf-token';

export function secureCookies(externalUrl: string): boolean {
  return externalUrl.startsWith('https://');
}

function sign(secretKeyBase: string, binding: string): string {
  return createHmac('sha256', secretKeyBase).update(`csrf:${binding}`).digest('base64url');
}

/**
 * The CSRF token for forms on this page: an HMAC under SECRET_KEY_BASE, so a page on another
 * site can neither read nor forge it. With a session (`session`: the session cookie's value)
 * the token is bound to that session, so a token taken from one session is refused in any
 * other, even next to a CSRF cookie planted from a sibling host. Before sign-in there is no
 * session: the token binds to a random secret in an HttpOnly cookie, which sign-in and
 * sign-out rotate (`rotateCsrf`).
 */
export function csrfToken(
  request: FastifyRequest,
  reply: FastifyReply,
  secretKeyBase: string,
  externalUrl: string,
  session: string | undefined,
): string {
  if (session) return sign(secretKeyBase, `session:${session}`);
  let value = request.cookies[CSRF_COOKIE];
  if (!value || !/^[A-Za-z0-9_-]{20,}$/.test(value)) {
    value = randomBytes(24).toString('base64url');
    reply.setCookie(CSRF_COOKIE, value, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(externalUrl) });
    request.cookies[CSRF_COOKIE] = value;
  }
  return sign(secretKeyBase, `browser:${value}`);
}

export function rotateCsrf(request: FastifyRequest, reply: FastifyReply, externalUrl: string): void {
  const value = randomBytes(24).toString('base64url');
  reply.setCookie(CSRF_COOKIE, value, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(externalUrl) });
  request.cookies[CSRF_COOKIE] = value;
}

/**
 * True when the request carries (form field or header) the token of its session, or without
 * a session the token of its pre-session CSRF cookie.
 */
export function verifyCsrf(request: FastifyRequest, secretKeyBase: string, session: string | undefined): boolean {
  const body = request.body as Record<string, unknown> | undefined;
  const fromBody = body && typeof body[CSRF_FIELD] === 'string' ? body[CSRF_FIELD] : undefined;
  const header = request.headers[CSRF_HEADER];
  const token = fromBody ?? (typeof header === 'string' ? header : undefined);
  if (!token) return false;
  if (session) return constantTimeEqual(token, sign(secretKeyBase, `session:${session}`));
  const value = request.cookies[CSRF_COOKIE];
  return value !== undefined && constantTimeEqual(token, sign(secretKeyBase, `browser:${value}`));
}
