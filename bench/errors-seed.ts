// Seeds one project with 100,000 errors (BENCH_ERRORS) for the errors-list-page scenario,
// through the application's database handle inside the server process: the project and its
// setting come through the API, the rows in batches (SQL the ingestion path would take hours
// to produce). Errors are spread over 30 days; the newest 2,000 have events in the last 24
// hours (the sparklines read them), every error has one event at its last sighting.
import type { FastifyInstance } from 'fastify';

const HOUR = 3_600_000;
const BATCH = 500;

export async function seedErrors(app: FastifyInstance, projectId: number, count: number): Promise<void> {
  const { db } = app.platform;
  const now = Date.now();
  const span = 30 * 24 * HOUR;
  for (let start = 0; start < count; start += BATCH) {
    await db.transaction().execute(async (trx) => {
      const errors = [];
      for (let i = start; i < Math.min(count, start + BATCH); i += 1) {
        // i = 0 is the newest error; statuses as a project would hold them (most unresolved).
        const lastSeen = now - Math.floor((i / count) * span);
        errors.push({
          project_id: projectId,
          fingerprint: `bench-${i}`,
          fingerprint_key: BigInt(i + 1),
          title: `BenchError${i % 97}: something failed in handler ${i}`,
          name: `BenchError${i % 97}`,
          description: `something failed in handler ${i}`,
          culprit: `app.handlers.h${i % 1000}`,
          platform: 'python',
          status: i % 10 === 0 ? ('resolved' as const) : i % 25 === 0 ? ('ignored' as const) : ('unresolved' as const),
          events_count: 1 + (i % 50),
          first_seen_at: lastSeen - (i % 7) * 24 * HOUR,
          last_seen_at: lastSeen,
          issue_iid: null,
          created_at: lastSeen,
          updated_at: lastSeen,
        });
      }
      const ids = await trx.insertInto('error_tracking_errors').values(errors).returning(['id', 'last_seen_at']).execute();
      const events = [];
      for (const [n, { id, last_seen_at }] of ids.entries()) {
        const i = start + n;
        const hours = i < 2000 ? [0, 1, 5, 11] : [0];
        for (const [k, back] of hours.entries()) {
          const at = Number(last_seen_at) - back * HOUR;
          events.push({
            project_id: projectId,
            error_id: Number(id),
            event_id: `${i.toString(16).padStart(28, '0')}${k.toString(16).padStart(4, '0')}`,
            occurred_at: at,
            received_at: at,
            level: 'error',
            environment: i % 3 === 0 ? 'staging' : 'production',
            release: `app@${1 + (i % 20)}.0`,
            user_identifier: `user-${i % 5000}`,
            description: `something failed in handler ${i}`,
            payload: '{}',
          });
        }
      }
      for (let k = 0; k < events.length; k += 1000) {
        await trx
          .insertInto('error_tracking_error_events')
          .values(events.slice(k, k + 1000))
          .execute();
      }
    });
  }
}
