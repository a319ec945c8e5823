import type { ResolvedSession } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import { digestToken } from '../../infra/crypto.js';
import type { Database } from '../../infra/db/index.js';
import { randomBytes } from 'node:crypto';
import { SessionsRepository } from './sessions.repository.js';
import { toActorUser } from './users.service.js';

/** The cookie SPEC "Authentication" names. */
export const SESSION_COOKIE = '_service_session';
/** Sessions end a week after sign-in, like the established product's default `session_expire_delay`. */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
const SESSION_VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface CreatedSession {
  /** The cookie value; only its digest is stored. */
  secret: string;
  expiresAt: number;
}

/**
 * Browser sessions. The cookie carries 256 random bits; the table keeps their SHA-256, so
 * a copy of the database cannot be replayed as a cookie (security checklist B10).
 */
export class SessionsService {
  private readonly sessions: SessionsRepository;

  constructor(
    db: Database,
    private readonly clock: Clock,
  ) {
    this.sessions = new SessionsRepository(db);
  }

  async create(userId: number, meta: { ip: string | null; userAgent: string | null }): Promise<CreatedSession> {
    const now = this.clock.now();
    const secret = randomBytes(32).toString('base64url');
    const expiresAt = now + SESSION_TTL_MS;
    await this.sessions.insert({
      digest: digestToken(secret),
      userId,
      ip: meta.ip,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
      now,
      expiresAt,
    });
    // Sign-ins are rare next to requests: a good moment to drop sessions that ran out.
    await this.sessions.deleteExpired(now);
    return { secret, expiresAt };
  }

  /** The session behind a cookie value, or null (unknown, malformed or expired). */
  async resolve(secret: string | undefined): Promise<ResolvedSession | null> {
    if (!secret || !SESSION_VALUE.test(secret)) return null;
    const found = await this.sessions.findByDigestWithUser(digestToken(secret));
    if (!found || found.session.expires_at <= this.clock.now()) return null;
    return { id: found.session.id, user: toActorUser(found.user) };
  }

  async destroy(secret: string | undefined): Promise<void> {
    if (!secret || !SESSION_VALUE.test(secret)) return;
    await this.sessions.deleteByDigest(digestToken(secret));
  }
}
