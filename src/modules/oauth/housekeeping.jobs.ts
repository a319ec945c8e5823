import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import type { JobContext, JobQueue } from '../../infra/jobs/index.js';
import type { OAuthStorage } from './oauth.storage.js';

export const HOUSEKEEPING_JOB = 'oauth_housekeeping';
const HOUR = 3_600_000;
/**
 * Expired codes and device grants are kept a day: a code presented again within it still
 * revokes what it was exchanged for (RFC 9700 §4.5), and a late poll still reads `expired_token`.
 */
const KEEP_EXPIRED = 24 * HOUR;
const BATCH = 1000;
/** The first run after a start waits a little, so a booting instance serves before it cleans. */
const FIRST_RUN_DELAY = 10 * 60_000;

/**
 * Codes and device grants are written by anonymous requests (`/oauth/authorize_device` needs
 * only a public client's id): without this they would pile up for ever. Tokens stay: each
 * came from a user's consent, and a rotated-out refresh token must still be recognised.
 */
export async function pruneExpiredGrants(storage: OAuthStorage, before: number, heartbeat: () => Promise<void>) {
  const total = { codes: 0, deviceGrants: 0 };
  for (;;) {
    const pruned = await storage.pruneGrants(before, BATCH);
    total.codes += pruned.codes;
    total.deviceGrants += pruned.deviceGrants;
    await heartbeat();
    if (pruned.codes < BATCH && pruned.deviceGrants < BATCH) return total;
  }
}

/**
 * Keeps one housekeeping job pending. On SQLite the transaction serialises callers; two
 * PostgreSQL processes starting together may both enqueue one, and the first run then sees
 * the other pending and does not schedule a third, so they fall back to one.
 */
async function ensureScheduled(db: Database, jobs: JobQueue, runAt: number, currentJobId = 0): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await jobs.enqueueUnlessPending(trx, HOUSEKEEPING_JOB, runAt, currentJobId);
  });
}

export function registerHousekeepingJob(storage: OAuthStorage, db: Database, jobs: JobQueue, clock: Clock): { schedule(): Promise<void> } {
  jobs.register(HOUSEKEEPING_JOB, async (_payload: unknown, context: JobContext) => {
    const now = clock.now();
    const pruned = await pruneExpiredGrants(storage, now - KEEP_EXPIRED, () => context.heartbeat());
    context.log.info(pruned, 'oauth housekeeping done');
    await ensureScheduled(db, jobs, now + HOUR, context.jobId);
  });
  return { schedule: () => ensureScheduled(db, jobs, clock.now() + FIRST_RUN_DELAY) };
}
