import type { Database } from '../../infra/db/index.js';
import type { JobQueue } from '../../infra/jobs/index.js';
import type { Clock } from '../../infra/clock.js';
import type { AuditService } from './audit.service.js';

export const AUDIT_RETENTION_JOB = 'audit_events_retention';
const DAY = 86_400_000;
/** The first run after a start waits a little, so a booting instance serves before it cleans. */
const FIRST_RUN_DELAY = 10 * 60_000;

/**
 * Audit events are kept AUDIT_EVENTS_RETENTION_DAYS (365 by default): one pending job a day
 * deletes older ones in batches of 1000 sets, heartbeating between batches, and schedules its next
 * run. `enqueueUnlessPending` keeps one pending: two processes starting at once may each
 * enqueue one, which costs one more (idempotent) run, not a duplicate schedule for ever.
 */
export function registerAuditRetention(db: Database, jobs: JobQueue, clock: Clock, audit: AuditService): { schedule(): Promise<void> } {
  const ensure = (runAt: number, currentJobId = 0) =>
    db.transaction().execute((trx) => jobs.enqueueUnlessPending(trx, AUDIT_RETENTION_JOB, runAt, currentJobId));
  jobs.register(AUDIT_RETENTION_JOB, async (_payload, context) => {
    const deleted = await audit.applyRetention(() => context.heartbeat());
    context.log.info({ deleted }, 'audit events retention done');
    await ensure(clock.now() + DAY, context.jobId);
  });
  return { schedule: async () => void (await ensure(clock.now() + FIRST_RUN_DELAY)) };
}
