import type { ResolvedSession } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import { digestToken } from '../../infra/crypto.js';
import { EpochCache, type Database, type Executor } from '../../infra/db/index.js';
import { randomBytes } from 'node:crypto';
import type { SessionWithUser, SessionsRepository } from './sessions.repository.js';
import { toActorUser } from './users.service.js';

/** The cookie SPEC "Authentication" names. */
export const SESSION_COOKIE = '_service_session';
const SESSION_VALUE = /^[A-Za-z0-9_-]{43}$/;
export const isSessionValue = (value: string | undefined): value is string => value !== undefined && SESSION_VALUE.test(value);
/** How late the idle deadline may be written: at most once a minute per session, not on every request. */
const TOUCH_GRANULARITY_MS = 60_000;

export interface SessionLifetimes {
  /** A session unused this long ends (SESSION_IDLE_TIMEOUT_MINUTES). */
  idleTimeoutMs: number;
  /** A session ends this long after sign-in, however active (SESSION_MAX_LIFETIME_DAYS). */
  maxLifetimeMs: number;
}

export interface CreatedSession {
  /** The cookie value; only its digest is stored. */
  secret: string;
  /** The absolute end: the cookie lives this long, the server ends the session sooner when idle. */
  endsAt: number;
}

/**
 * Browser sessions. The cookie carries 256 random bits; the table keeps their SHA-256, so
 * a copy of the database cannot be replayed as a cookie (security checklist B10).
 *
 * A session has two deadlines: `expires_at` is the idle one, moved forward as the session is
 * used (written at most once per granularity, so a burst of requests costs one write), and
 * never past `created_at` plus the absolute lifetime (docs/decisions.md).
 */
export class SessionsService {
  private readonly granularityMs: number;

  /**
   * Session lookups kept until the `credentials` epoch moves (a sign-out, a password change, a
   * user blocked or deleted: identity.epochs.ts) and 5 s at most, as token lookups are: a page
   * view that finds its session here costs no round trip (the epoch is read once per turn).
   */
  private readonly found: EpochCache<SessionWithUser | undefined>;

  constructor(
    db: Database,
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
    private readonly lifetimes: SessionLifetimes,
  ) {
    // A short idle timeout needs a finer record of activity than a minute.
    this.granularityMs = Math.min(TOUCH_GRANULARITY_MS, Math.floor(lifetimes.idleTimeoutMs / 10));
    this.found = new EpochCache({ db, epochs: ['credentials'], clock, ttlMs: 5_000, maxEntries: 10_000 });
  }

  async create(userId: number, meta: { ip: string | null; userAgent: string | null }): Promise<CreatedSession> {
    const now = this.clock.now();
    const secret = randomBytes(32).toString('base64url');
    const endsAt = now + this.lifetimes.maxLifetimeMs;
    await this.sessions.insert({
      digest: digestToken(secret),
      userId,
      ip: meta.ip,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
      now,
      expiresAt: Math.min(now + this.lifetimes.idleTimeoutMs, endsAt),
    });
    // Sign-ins are rare next to requests: a good moment to drop sessions that ran out.
    await this.sessions.deleteExpired(now);
    return { secret, endsAt };
  }

  /** The session behind a cookie value, or null (unknown, malformed, idle too long or past its lifetime). */
  async resolve(secret: string | undefined): Promise<ResolvedSession | null> {
    if (!secret || !SESSION_VALUE.test(secret)) return null;
    const digest = digestToken(secret);
    const now = this.clock.now();
    let found = await this.found.through(
      digest,
      () => this.sessions.findByDigestWithUser(digest),
      (value) => value !== undefined,
    );
    // Another process may have moved the idle deadline (its writes do not move the epoch):
    // a kept row that says expired is read again before the session is refused.
    if (found && found.session.expires_at <= now) found = await this.sessions.findByDigestWithUser(digest);
    if (!found || found.session.expires_at <= now) return null;
    const endsAt = found.session.created_at + this.lifetimes.maxLifetimeMs;
    if (endsAt <= now) return null;
    const idleUntil = Math.min(now + this.lifetimes.idleTimeoutMs, endsAt);
    if (idleUntil - found.session.expires_at >= this.granularityMs) {
      await this.sessions.extend(found.session.id, idleUntil);
      // The kept row follows its own write, so the next request does not write again.
      found.session.expires_at = Math.max(found.session.expires_at, idleUntil);
    }
    return { id: found.session.id, user: toActorUser(found.user) };
  }

  async destroy(secret: string | undefined): Promise<void> {
    if (!secret || !SESSION_VALUE.test(secret)) return;
    await this.sessions.deleteByDigest(digestToken(secret));
  }

  /**
   * Ends every session of a user but the one given (the session that made the change, if it
   * is theirs), in the caller's transaction: a password change ends the sessions of whoever
   * knew the old one.
   */
  async endOtherSessions(executor: Executor, userId: number, keepSessionId: number | undefined): Promise<void> {
    await this.sessions.on(executor).deleteForUser(userId, keepSessionId);
  }
}
