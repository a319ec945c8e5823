import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIntegration, notify, settle } from '../helpers/alerts.js';
import type { TestApp } from '../helpers/app.js';
import { createProject, type TestUser } from '../helpers/factories.js';
import { post, storePath, sentryAuth, trackedProject } from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

/** The value of one sample of `/-/metrics` (name and labels as written there); undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('domain metrics on /-/metrics', () => {
  let t: TestApp;
  let owner: TestUser;
  const scrape = async (): Promise<string> => {
    const res = await t.app.inject({ method: 'GET', url: '/-/metrics', remoteAddress: '127.0.0.1' });
    assert.equal(res.statusCode, 200);
    return res.body;
  };

  before(async () => {
    ({ t, owner } = await appWithUsers(['owner'], { env: { RATE_LIMITS: 'alerts=3/m' } }));
    await settle(t);
  });
  after(() => t.close());

  it('lists every figure from the start: counters at their first count, gauges read at the scrape', async () => {
    const text = await scrape();
    for (const name of [
      'basalt_alerts_received_total',
      'basalt_error_events_ingested_total',
      'basalt_rate_limit_refusals_total',
      'basalt_audit_events_written_total',
      'basalt_jobs',
      'basalt_database_pool_waiting',
      'basalt_storage_moves',
      'basalt_git_processes_running',
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${name} (counter|gauge)$`, 'm'), name);
    }
    // The scrape's own gauge queries may queue on PostgreSQL's pool while it is read.
    assert.ok((sample(text, 'basalt_database_pool_waiting') ?? -1) >= 0);
    assert.equal(sample(text, 'basalt_git_processes_running'), 0);
  });

  it('counts alerts by result and the rate limit that refused one', async () => {
    const project = await createProject(t.app, owner);
    const integration = await createIntegration(t, project.id, { name: 'metrics' });
    for (let i = 0; i < 3; i += 1)
      assert.equal((await notify(t, integration.url, { title: `a${i}` }, { key: integration.token })).statusCode, 200);
    assert.equal((await notify(t, integration.url, { title: 'over' }, { key: integration.token })).statusCode, 429);
    assert.equal((await notify(t, integration.url, { title: 'x' }, { key: 'wrong' })).statusCode, 401);
    const text = await scrape();
    assert.equal(sample(text, 'basalt_alerts_received_total{result="accepted"}'), 3);
    assert.equal(sample(text, 'basalt_alerts_received_total{result="rate_limited"}'), 1);
    assert.equal(sample(text, 'basalt_alerts_received_total{result="unauthorized"}'), 1);
    assert.equal(sample(text, 'basalt_rate_limit_refusals_total{limit="alerts"}'), 1);
  });

  it('counts error events by result', async () => {
    const tracked = await trackedProject(t, owner);
    const event = JSON.stringify({ event_id: 'a'.repeat(32), message: 'boom', platform: 'node' });
    assert.equal((await post(t, storePath(tracked.projectId), event, { 'x-sentry-auth': sentryAuth(tracked.key) })).statusCode, 200);
    assert.equal((await post(t, storePath(tracked.projectId), '{not json', { 'x-sentry-auth': sentryAuth(tracked.key) })).statusCode, 400);
    const text = await scrape();
    assert.equal(sample(text, 'basalt_error_events_ingested_total{result="accepted"}'), 1);
    assert.equal(sample(text, 'basalt_error_events_ingested_total{result="invalid"}'), 1);
  });

  it('reads jobs by kind and state, storage moves by state and audit events written', async () => {
    const project = await createProject(t.app, owner);
    const move = await t.api('POST', `/projects/${project.id}/repository_storage_moves`, { body: {} });
    assert.equal(move.statusCode, 201, move.body);
    const rows = await t.database.handle.db
      .selectFrom('background_jobs')
      .select(['kind', 'state', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy(['kind', 'state'])
      .execute();
    const text = await scrape();
    assert.ok(rows.length > 0, 'actions above enqueued jobs (the test app runs none)');
    for (const row of rows) assert.equal(sample(text, `basalt_jobs{kind="${row.kind}",state="${row.state}"}`), Number(row.n), row.kind);
    assert.equal(sample(text, 'basalt_storage_moves{state="scheduled"}'), 1);
    const created = await t.api('POST', '/user/personal_access_tokens', { token: owner.token, body: { name: 'm', scopes: ['api'] } });
    assert.equal(created.statusCode, 201);
    // Token creation stores its event with the shared commit.
    const written = await t.database.handle.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    const after = await scrape();
    const counted = ['User', 'Project', 'Group', 'Gitlab::Audit::InstanceScope']
      .map((type) => sample(after, `basalt_audit_events_written_total{entity_type="${type}"}`) ?? 0)
      .reduce((a, b) => a + b, 0);
    assert.equal(counted, Number(written.n), 'every audit event written is counted');
  });
});
