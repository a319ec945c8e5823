import { sql } from 'kysely';
import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import type { JobContext, JobQueue } from '../../infra/jobs/index.js';

export const RETENTION_JOB = 'error_tracking_retention';
const DAY = 86_400_000;
const BATCH = 1000;
/** The first run after a start waits a little, so a booting instance serves before it cleans. */
const FIRST_RUN_DELAY = 10 * 60_000;

export interface RetentionResult {
  events: number;
  errors: number;
  sessionCounts: number;
}

/**
 * SPEC "Limits": error tracking data is kept 90 days (ERROR_TRACKING_RETENTION_DAYS). Rows
 * go in batches of 1000 so no statement holds locks for long, and the job heartbeats between
 * batches so its lease does not run out on a large backlog.
 */
export async function applyRetention(db: Database, cutoff: number, heartbeat: () => Promise<void>): Promise<RetentionResult> {
  const result: RetentionResult = { events: 0, errors: 0, sessionCounts: 0 };
  for (;;) {
    const deleted = await db
      .deleteFrom('error_tracking_error_events')
      .where('id', 'in', (eb) =>
        eb.selectFrom('error_tracking_error_events').select('id').where('occurred_at', '<', cutoff).orderBy('id').limit(BATCH),
      )
      .executeTakeFirst();
    result.events += Number(deleted.numDeletedRows);
    await heartbeat();
    if (Number(deleted.numDeletedRows) < BATCH) break;
  }
  for (;;) {
    // `last_seen_at < cutoff` stays in the outer WHERE: PostgreSQL re-checks it on a row an
    // ingestion just updated, so an error that received a new event is never removed.
    const deleted = await db
      .deleteFrom('error_tracking_errors')
      .where('last_seen_at', '<', cutoff)
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('error_tracking_errors as e')
          .select('e.id')
          .where('e.last_seen_at', '<', cutoff)
          .where((eb) =>
            eb.not(
              eb.exists(
                eb
                  .selectFrom('error_tracking_error_events as v')
                  .select(sql`1`.as('one'))
                  .whereRef('v.error_id', '=', 'e.id'),
              ),
            ),
          )
          .limit(BATCH),
      )
      .executeTakeFirst();
    result.errors += Number(deleted.numDeletedRows);
    await heartbeat();
    if (Number(deleted.numDeletedRows) < BATCH) break;
  }
  const sessions = await db.deleteFrom('error_tracking_session_counts').where('bucket_at', '<', cutoff).executeTakeFirst();
  result.sessionCounts = Number(sessions.numDeletedRows);
  return result;
}

/**
 * Keeps exactly one retention job pending. The schedule row is written first, which locks
 * it (PostgreSQL) or takes the write lock (SQLite), so concurrent callers check in turn.
 */
export async function ensureScheduled(db: Database, jobs: JobQueue, runAt: number, now: number, currentJobId = 0): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('error_tracking_schedules')
      .values({ name: RETENTION_JOB, updated_at: now })
      .onConflict((oc) => oc.column('name').doUpdateSet({ updated_at: now }))
      .execute();
    return jobs.enqueueUnlessPending(trx, RETENTION_JOB, runAt, currentJobId);
  });
}

export function registerRetentionJob(db: Database, jobs: JobQueue, clock: Clock, retentionDays: number): { schedule(): Promise<void> } {
  jobs.register(RETENTION_JOB, async (_payload: unknown, context: JobContext) => {
    const now = clock.now();
    const result = await applyRetention(db, now - retentionDays * DAY, () => context.heartbeat());
    context.log.info({ ...result, retentionDays }, 'error tracking retention done');
    await ensureScheduled(db, jobs, now + DAY, now, context.jobId);
  });
  return {
    schedule: async () => {
      const now = clock.now();
      await ensureScheduled(db, jobs, now + FIRST_RUN_DELAY, now);
    },
  };
}
