import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token in a mail's List-Unsubscribe link: which user and which project, signed with the
 * instance secret, so the one-click POST (RFC 8058) needs no credentials and can do only that:
 * set this user's level for this project to `disabled`.
 */
const PURPOSE = 'basalt:notifications-unsubscribe:';

const mac = (payload: string, secret: string) => createHmac('sha256', `${PURPOSE}${secret}`).update(payload).digest('base64url');

export function unsubscribeToken(userId: number, projectId: number, secret: string): string {
  const payload = `${userId}.${projectId}`;
  return `${payload}.${mac(payload, secret)}`;
}

/** The user and project a token names, or null when it is malformed or not signed by this instance. */
export function readUnsubscribeToken(token: string, secret: string): { userId: number; projectId: number } | null {
  const match = /^(\d{1,15})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return null;
  const expected = Buffer.from(mac(`${match[1]}.${match[2]}`, secret));
  const given = Buffer.from(match[3] as string);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  return { userId: Number(match[1]), projectId: Number(match[2]) };
}
