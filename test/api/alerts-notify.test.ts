import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  alertmanagerPayload,
  createIntegration,
  notify,
  pathOf,
  prometheusItem,
  settle,
  type CreatedIntegration,
} from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';

describe('alert receiver (notify endpoints)', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let http: CreatedIntegration;
  let prom: CreatedIntegration;
  before(async () => {
    t = await createTestApp({ env: { RATE_LIMITS: 'alerts=1000/m' } });
    await settle(t);
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    projectId = project.id;
    http = await createIntegration(t, projectId, { name: 'generic' });
    prom = await createIntegration(t, projectId, { name: 'prom', type: 'prometheus' });
  });
  after(() => t.close());

  const getAlert = async (iid: number) => (await t.api('GET', `/projects/${projectId}/alert_management/alerts/${iid}`)).json();

  it('accepts the key as Bearer, as Basic with any or blank user name, and answers [{iid, title}]', async () => {
    const bearer = await notify(t, http.url, { title: 'Bearer alert' }, { key: http.token });
    assert.equal(bearer.statusCode, 200);
    const [first] = bearer.json();
    assert.equal(first.title, 'Bearer alert');
    assert.equal(typeof first.iid, 'number');
    for (const user of ['', 'anything']) {
      const basic = Buffer.from(`${user}:${http.token}`).toString('base64');
      const res = await notify(t, http.url, { title: `Basic ${user}` }, { headers: { authorization: `Basic ${basic}` } });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(Object.keys(res.json()[0]).sort(), ['iid', 'title']);
    }
  });

  it('a wrong or missing key is 401; unknown endpoint 403 on a public project; on a private or unknown project 401', async () => {
    assert.equal((await notify(t, http.url, { title: 'x' }, { key: `${http.token}x` })).statusCode, 401);
    assert.equal((await notify(t, http.url, { title: 'x' })).statusCode, 401);
    assert.equal((await notify(t, prom.url, alertmanagerPayload([prometheusItem()]), { key: http.token })).statusCode, 401);
    // Issue 18: what a private or missing project answers cannot tell whether it exists.
    const unknown = http.url.replace(http.endpoint_identifier, '0123456789abcdef');
    assert.equal((await notify(t, unknown, { title: 'x' }, { key: http.token })).statusCode, 401);
    const elsewhere = http.url.replace(/\/[^/]+\/alerts\/notify/, '/nope/alerts/notify');
    assert.equal((await notify(t, elsewhere, { title: 'x' }, { key: http.token })).statusCode, 401);
    const open = await createIntegration(t, (await createProject(t.app, owner, { visibility: 'public' })).id, { name: 'public' });
    const openUnknown = open.url.replace(open.endpoint_identifier, '0123456789abcdef');
    assert.equal((await notify(t, openUnknown, { title: 'x' }, { key: open.token })).statusCode, 403);
  });

  it('requires Content-Type application/json (415), well-formed JSON (400), at most 1 MiB (413) and depth 100 (400)', async () => {
    const plain = await notify(t, http.url, null, { key: http.token, headers: { 'content-type': 'text/plain' }, raw: '{"title":"x"}' });
    assert.equal(plain.statusCode, 415);
    assert.match(plain.json().message, /application\/json/);
    const malformed = await notify(t, http.url, null, { key: http.token, raw: '{"title": ' });
    assert.equal(malformed.statusCode, 400);
    assert.match(malformed.json().message, /Malformed JSON/);
    const big = await notify(t, http.url, { title: 'big', blob: 'x'.repeat(1024 * 1024) }, { key: http.token });
    assert.equal(big.statusCode, 413);
    assert.match(big.json().message, /limited to 1048576 bytes/);
    const nest = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
    const deep = await notify(t, http.url, null, { key: http.token, raw: nest(101) });
    assert.equal(deep.statusCode, 400);
    assert.match(deep.json().message, /deeper than 100/);
    assert.equal((await notify(t, http.url, null, { key: http.token, raw: nest(100) })).statusCode, 200);
    assert.equal((await notify(t, http.url, null, { key: http.token, raw: '[1]' })).statusCode, 400);
  });

  it('works for projects in nested groups, and root routes keep working', async () => {
    const top = await createGroup(t.app, owner);
    const sub = await createGroup(t.app, owner, { parentId: top.id });
    const project = await createProject(t.app, owner, { namespaceId: sub.id });
    const nested = await createIntegration(t, project.id, { name: 'deep' });
    assert.equal(pathOf(nested.url).split('/').length, 8);
    const res = await notify(t, nested.url, { title: 'Nested' }, { key: nested.token });
    assert.deepEqual(res.json(), [{ iid: 1, title: 'Nested' }]);
    assert.equal((await t.app.inject({ method: 'GET', url: '/-/health' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/users/sign_in' })).statusCode, 200);
    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: 'grant_type=password',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(token.statusCode, 400);
    assert.ok(token.json().error, 'the OAuth handler answered');
    // An address naming nothing is a page address: a visitor is asked to sign in, as for a private project.
    const nothing = await t.app.inject({ method: 'GET', url: '/no/such/page' });
    assert.equal(nothing.statusCode, 302);
    assert.equal(nothing.headers.location, `/users/sign_in?redirect_to=${encodeURIComponent('/no/such/page')}`);
  });

  it('generic defaults: title New: Alert, start time now, severity critical; custom fields kept', async () => {
    const res = await notify(t, http.url, { nested: { deep: [1, { x: true }] }, team: 'db' }, { key: http.token });
    const [{ iid, title }] = res.json();
    assert.equal(title, 'New: Alert');
    const alert = await getAlert(iid);
    assert.equal(alert.severity, 'critical');
    assert.equal(alert.status, 'triggered');
    assert.equal(Date.parse(alert.started_at), t.clock.now());
    assert.deepEqual(alert.custom_fields, { nested: { deep: [1, { x: true }] }, team: 'db' });
    assert.equal(alert.event_count, 1);
    // The values are stored once, in the payload; the row names where they are.
    const row = await t.database.handle.db
      .selectFrom('alerts')
      .select('custom_fields')
      .where('id', '=', alert.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.custom_fields), [['nested'], ['team']]);
  });

  it('generic fields: severities case-insensitive with unknown kept, hosts, bounds on lengths', async () => {
    const cases: [unknown, string][] = [
      ['HIGH', 'high'],
      ['Unknown', 'unknown'],
      ['info', 'info'],
      ['bogus', 'critical'],
      [7, 'critical'],
    ];
    for (const [given, expected] of cases) {
      const [{ iid }] = (await notify(t, http.url, { title: `sev ${String(given)}`, severity: given }, { key: http.token })).json();
      assert.equal((await getAlert(iid)).severity, expected, `severity ${String(given)}`);
    }
    const long = await notify(
      t,
      http.url,
      {
        title: 't'.repeat(300),
        description: 'd'.repeat(2000),
        service: 's'.repeat(200),
        monitoring_tool: 'm'.repeat(200),
        hosts: ['a'.repeat(200), ['b'.repeat(100)], 'c'],
        service_environment_name: 'production',
        start_time: '2026-03-01T12:00:00+02:00',
      },
      { key: http.token },
    );
    const alert = await getAlert(long.json()[0].iid);
    assert.equal(alert.title.length, 200);
    assert.ok(alert.title.endsWith('...'));
    assert.equal(alert.description.length, 1000);
    assert.equal(alert.service.length, 100);
    assert.equal(alert.monitoring_tool.length, 100);
    assert.deepEqual(alert.hosts, ['a'.repeat(200), 'b'.repeat(55)]);
    assert.equal(alert.environment_name, 'production');
    assert.equal(alert.started_at, '2026-03-01T10:00:00.000Z');
    const single = await notify(t, http.url, { title: 'one host', hosts: 'web-1' }, { key: http.token });
    assert.deepEqual((await getAlert(single.json()[0].iid)).hosts, ['web-1']);
  });

  it('Prometheus: missing top-level attributes are a 400 naming them', async () => {
    const payload = alertmanagerPayload([prometheusItem()]);
    delete payload.groupKey;
    delete payload.receiver;
    const res = await notify(t, prom.url, payload, { key: prom.token });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, 'groupKey, receiver are missing');
  });

  it('Prometheus items: title fallbacks, severity aliases, query, runbook, description, markdown, y label, annotations', async () => {
    const items = [
      prometheusItem({
        startsAt: '2026-01-02T00:00:00Z',
        annotations: {
          title: 'Title wins',
          summary: 'not me',
          service_incident_markdown: '## Act now',
          service_y_label: 'ms',
          extra: { a: 1 },
        },
        labels: { alertname: 'A', severity: 'P2' },
      }),
      prometheusItem({
        startsAt: '2026-01-03T00:00:00Z',
        labels: { alertname: 'B', severity: 'warn', service_environment_name: 'production' },
      }),
      prometheusItem({ startsAt: '2026-01-04T00:00:00Z', annotations: {}, labels: { alertname: 'From label', severity: 'NOTICE' } }),
      prometheusItem({ startsAt: '2026-01-05T00:00:00Z', annotations: {}, labels: { alertname: 'Sev', severity: 'minor' } }),
      prometheusItem({ annotations: {}, labels: {} }),
    ];
    const res = await notify(t, prom.url, alertmanagerPayload(items), { key: prom.token });
    assert.equal(res.statusCode, 200, res.body);
    const created = res.json();
    assert.deepEqual(
      created.map((a: { title: string }) => a.title),
      ['Title wins', 'Latency is high', 'From label', 'Sev'],
    );
    const [a, b, c, d] = await Promise.all(created.map((x: { iid: number }) => getAlert(x.iid)));
    assert.equal(a.severity, 'high');
    assert.equal(a.y_label, 'ms');
    assert.equal(a.incident_markdown, '## Act now');
    assert.deepEqual(a.custom_fields, { summary: 'not me', extra: { a: 1 } });
    assert.equal(a.monitoring_tool, 'Prometheus');
    assert.equal(b.severity, 'low');
    assert.equal(b.description, 'p99 over 1s');
    assert.equal(b.runbook, 'https://runbooks.test/latency');
    assert.equal(b.full_query, 'histogram_quantile(0.99, rate(x[5m])) > 1');
    assert.equal(b.environment_name, 'production');
    assert.equal(b.y_label, 'Latency is high');
    assert.deepEqual(b.custom_fields, { dashboard: 'latency' });
    assert.equal(b.started_at, '2026-01-03T00:00:00.000Z');
    assert.equal(c.severity, 'info');
    assert.equal(c.y_label, 'From label');
    assert.equal(d.severity, 'critical');
  });

  it('a Prometheus-shaped payload sent to an HTTP endpoint is read as Prometheus', async () => {
    const res = await notify(t, http.url, alertmanagerPayload([prometheusItem({ startsAt: '2026-05-05T00:00:00Z' })]), { key: http.token });
    assert.equal(res.statusCode, 200);
    const alert = await getAlert(res.json()[0].iid);
    assert.equal(alert.title, 'Latency is high');
    assert.equal(alert.severity, 'low');
  });

  it('the Prometheus notify URL works without the .json suffix, with the same key checks', async () => {
    const bare = prom.url.replace(/\.json$/, '');
    assert.ok(pathOf(bare).endsWith('/prometheus/alerts/notify'));
    const payload = alertmanagerPayload([prometheusItem({ startsAt: '2026-06-06T00:00:00Z', annotations: { title: 'No suffix' } })]);
    const res = await notify(t, bare, payload, { key: prom.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().map((a: { title: string }) => a.title),
      ['No suffix'],
    );
    assert.equal((await notify(t, bare, payload, { key: http.token })).statusCode, 401);
    assert.equal((await notify(t, bare, payload)).statusCode, 401);
    assert.equal(
      (await notify(t, bare.replace(/\/[^/]+\/prometheus\//, '/nope/prometheus/'), payload, { key: prom.token })).statusCode,
      401,
    );
  });

  it('the alerts rate limit (per address and integration) answers 429', async () => {
    const limited = await createTestApp({ sameDatabaseAs: t, config: { rateLimits: { alerts: { count: 2, periodSeconds: 60 } } } });
    await settle(limited);
    try {
      const user = await createUser(limited.app);
      const project = await createProject(limited.app, user);
      const integration = await createIntegration(limited, project.id, { name: 'limited' });
      const statuses = [];
      for (let i = 0; i < 3; i += 1)
        statuses.push((await notify(limited, integration.url, { title: `n${i}` }, { key: integration.token })).statusCode);
      assert.deepEqual(statuses, [200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});
