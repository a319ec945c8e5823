import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { constantTimeEqual } from '../infra/crypto.js';
import type { Flash } from './page-policy.js';

/** A message carried across a redirect ("Token revoked."), shown once by the next page. */
export const FLASH_COOKIE = '_basalt_flash';
const MAX_TEXT = 500;

// Signed, so a cookie planted from a sibling host cannot put words on our pages.
const sign = (secret: string, value: string) => createHmac('sha256', secret).update(`flash:${value}`).digest('base64url');

export function writeFlash(reply: FastifyReply, secret: string, secure: boolean, flash: Flash): void {
  const value = Buffer.from(JSON.stringify({ k: flash.kind, t: flash.text.slice(0, MAX_TEXT) })).toString('base64url');
  reply.setCookie(FLASH_COOKIE, `${value}.${sign(secret, value)}`, { path: '/', httpOnly: true, sameSite: 'lax', secure, maxAge: 60 });
}

/** The flash of this request, if any, and the cookie cleared so it shows once. */
export function takeFlash(request: FastifyRequest, reply: FastifyReply, secret: string, secure: boolean): Flash | null {
  const cookie = request.cookies[FLASH_COOKIE];
  if (!cookie) return null;
  reply.clearCookie(FLASH_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure });
  const [value = '', mac = ''] = cookie.split('.', 2);
  if (!constantTimeEqual(mac, sign(secret, value))) return null;
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as { k?: unknown; t?: unknown };
    if ((parsed.k === 'notice' || parsed.k === 'error') && typeof parsed.t === 'string') return { kind: parsed.k, text: parsed.t };
  } catch {
    // a damaged cookie shows nothing
  }
  return null;
}
