import { createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../crypto.js';

/** The cookie that carries the per-browser CSRF secret (double-submit, HMAC-bound). */
export const CSRF_COOKIE = '_basalt_csrf';
/** Form field and header names for the token (the header is what API callers with a session send). */
export const CSRF_FIELD = 'authenticity_token';
export const CSRF_HEADER = 'x-csrf-token';

export function secureCookies(externalUrl: string): boolean {
  return externalUrl.startsWith('https://');
}

function sign(secretKeyBase: string, value: string): string {
  return createHmac('sha256', secretKeyBase).update(`csrf:${value}`).digest('base64url');
}

/**
 * The CSRF token for forms on this page. A random secret lives in an HttpOnly cookie; the
 * token is its HMAC under SECRET_KEY_BASE, so a page on another site can neither read nor
 * forge it. Sign-in rotates the cookie (`rotateCsrf`) along with the session.
 */
export function csrfToken(request: FastifyRequest, reply: FastifyReply, secretKeyBase: string, externalUrl: string): string {
  let value = request.cookies[CSRF_COOKIE];
  if (!value || !/^[A-Za-z0-9_-]{20,}$/.test(value)) {
    value = randomBytes(24).toString('base64url');
    reply.setCookie(CSRF_COOKIE, value, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(externalUrl) });
    request.cookies[CSRF_COOKIE] = value;
  }
  return sign(secretKeyBase, value);
}

export function rotateCsrf(request: FastifyRequest, reply: FastifyReply, externalUrl: string): void {
  const value = randomBytes(24).toString('base64url');
  reply.setCookie(CSRF_COOKIE, value, { path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(externalUrl) });
  request.cookies[CSRF_COOKIE] = value;
}

/** True when the request carries the token for its CSRF cookie (form field or header). */
export function verifyCsrf(request: FastifyRequest, secretKeyBase: string): boolean {
  const value = request.cookies[CSRF_COOKIE];
  const body = request.body as Record<string, unknown> | undefined;
  const fromBody = body && typeof body[CSRF_FIELD] === 'string' ? body[CSRF_FIELD] : undefined;
  const header = request.headers[CSRF_HEADER];
  const token = fromBody ?? (typeof header === 'string' ? header : undefined);
  if (!value || !token) return false;
  return constantTimeEqual(token, sign(secretKeyBase, value));
}
