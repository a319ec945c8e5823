// Seeds one project with 100,000 alerts (BENCH_ALERTS) for the alerts-list-page scenario, through
// the application's database handle inside the server process: the project comes through the API,
// the rows in batches (the receiver would take minutes to produce them). Alerts are spread over
// 30 days; most are triggered, some acknowledged, a fifth resolved, as a busy project holds them.
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';

const HOUR = 3_600_000;
const BATCH = 500;
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

export async function seedAlerts(app: FastifyInstance, projectId: number, count: number): Promise<void> {
  const { db } = app.platform;
  const now = Date.now();
  const span = 30 * 24 * HOUR;
  for (let start = 0; start < count; start += BATCH) {
    await db.transaction().execute(async (trx) => {
      const rows = [];
      for (let i = start; i < Math.min(count, start + BATCH); i += 1) {
        // i = 0 is the oldest alert (iid 1); the newest starts last.
        const at = now - span + Math.floor((i / count) * span);
        const status = i % 5 === 0 ? ('resolved' as const) : i % 7 === 0 ? ('acknowledged' as const) : ('triggered' as const);
        rows.push({
          project_id: projectId,
          iid: i + 1,
          integration_id: null,
          title: `Bench alert ${i % 211}: latency above threshold on host-${i % 300}`,
          description: `p99 over 1s on host-${i % 300}`,
          service: `svc-${i % 40}`,
          monitoring_tool: 'Prometheus',
          hosts: JSON.stringify([`host-${i % 300}`]),
          severity: SEVERITIES[i % SEVERITIES.length]!,
          status,
          started_at: at,
          ended_at: status === 'resolved' ? at + HOUR : null,
          events: 1 + (i % 20),
          fingerprint: `bench-${i}`,
          environment_name: null,
          runbook: null,
          full_query: null,
          y_label: null,
          incident_markdown: null,
          payload: '{}',
          custom_fields: '[]',
          issue_id: null,
          created_at: at,
          updated_at: at,
          assignee_id: null,
        });
      }
      await trx.insertInto('alerts').values(rows).execute();
    });
  }
  // A bulk load is followed by autovacuum's ANALYZE within a minute on PostgreSQL; the load starts
  // at once, so it is run here: without statistics the planner sorts every open alert for a page.
  if (app.platform.database.dialect === 'postgres') await sql`analyze alerts`.execute(db);
}
