import type { FastifyReply, FastifyRequest } from 'fastify';

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
export function safeRedirectPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > REDIRECT_MAX) return null;
  if (!value.startsWith('/') || value.startsWith('//') || /[\\\s]/.test(value) || hasControlCharacter(value)) return null;
  try {
    const url = new URL(value, 'http://same.invalid');
    return url.origin === 'http://same.invalid' ? value : null;
  } catch {
    return null;
  }
}

export function signInPath(redirectTo?: string | null): string {
  return redirectTo ? `/users/sign_in?redirect_to=${encodeURIComponent(redirectTo)}` : '/users/sign_in';
}

/** Sends a visitor who must sign in first to the sign-in page, coming back here afterwards (GET only). */
export function toSignIn(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const safe = request.method === 'GET' || request.method === 'HEAD';
  return reply.redirect(signInPath(safe ? safeRedirectPath(request.originalUrl) : null), safe ? 302 : 303);
}
