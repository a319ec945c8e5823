import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIntegration, notify, alertmanagerPayload, prometheusItem, settle } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

describe('alert integrations API', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  let fullPath: string;
  before(async () => {
    t = await createTestApp();
    await settle(t);
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    projectId = project.id;
    fullPath = project.full_path;
  });
  after(() => t.close());

  const base = () => `/projects/${projectId}/alert_management/integrations`;

  it('creates an HTTP integration: key shown once with the bsa_ prefix, URL under the project path', async () => {
    const created = await createIntegration(t, projectId, { name: 'My Endpoint!' }, owner.token);
    assert.match(created.token, /^bsa_[A-Za-z0-9_-]{40,}$/);
    assert.equal(created.type, 'http');
    assert.match(created.endpoint_identifier, /^[0-9a-f]{16}$/);
    assert.equal(created.url, `http://basalt.test/${fullPath}/alerts/notify/my-endpoint/${created.endpoint_identifier}.json`);
    const listed = await t.api('GET', base(), { token: owner.token });
    assert.equal(listed.statusCode, 200);
    const row = listed.json().find((i: { id: number }) => i.id === created.id);
    assert.equal(row.url, created.url);
    assert.equal('token' in row, false);
    // Only a digest is stored.
    const stored = await t.database.handle.db
      .selectFrom('alert_integrations')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.token_digest, created.token);
    assert.ok(!JSON.stringify(stored).includes(created.token));
  });

  it('a Prometheus integration gets the prometheus notify URL, and only one per project', async () => {
    const created = await createIntegration(t, projectId, { name: 'Prom', type: 'prometheus' });
    assert.equal(created.url, `http://basalt.test/${fullPath}/prometheus/alerts/notify.json`);
    const second = await t.api('POST', base(), { body: { name: 'Prom 2', type: 'prometheus' } });
    assert.equal(second.statusCode, 422);
    assert.match(second.json().message, /Multiple integrations/);
  });

  it('Maintainer configures; Developer may only send test alerts; Reporter neither; outsiders see 404', async () => {
    const project = await createProject(t.app, owner);
    const [maintainer, developer, reporter, outsider] = await Promise.all([
      createUser(t.app),
      createUser(t.app),
      createUser(t.app),
      createUser(t.app),
    ]);
    await addMember(t.app, 'project', project.id, maintainer, 40);
    await addMember(t.app, 'project', project.id, developer, 30);
    await addMember(t.app, 'project', project.id, reporter, 20);
    const url = `/projects/${project.id}/alert_management/integrations`;
    const made = await t.api('POST', url, { token: maintainer.token, body: { name: 'ops' } });
    assert.equal(made.statusCode, 201);
    const id = made.json().id;
    assert.equal((await t.api('POST', url, { token: developer.token, body: { name: 'x' } })).statusCode, 403);
    assert.equal((await t.api('GET', url, { token: developer.token })).statusCode, 403);
    assert.equal((await t.api('PUT', `${url}/${id}`, { token: developer.token, body: { name: 'y' } })).statusCode, 403);
    assert.equal((await t.api('POST', `${url}/${id}/reset_token`, { token: developer.token })).statusCode, 403);
    const test = await t.api('POST', `${url}/${id}/test`, { token: developer.token, body: { title: 'Developer test' } });
    assert.equal(test.statusCode, 200, test.body);
    assert.deepEqual(test.json(), [{ iid: 1, title: 'Developer test' }]);
    assert.equal((await t.api('POST', `${url}/${id}/test`, { token: reporter.token, body: {} })).statusCode, 403);
    assert.equal((await t.api('GET', url, { token: outsider.token })).statusCode, 404);
    assert.equal((await t.api('GET', url, { token: null })).statusCode, 401);
  });

  it('reset_token shows a new key once; the old key stops working', async () => {
    const project = await createProject(t.app, owner);
    const created = await createIntegration(t, project.id, { name: 'reset' });
    const reset = await t.api('POST', `/projects/${project.id}/alert_management/integrations/${created.id}/reset_token`);
    assert.equal(reset.statusCode, 200);
    const fresh = reset.json().token as string;
    assert.match(fresh, /^bsa_/);
    assert.notEqual(fresh, created.token);
    assert.equal((await notify(t, created.url, { title: 'old' }, { key: created.token })).statusCode, 401);
    assert.equal((await notify(t, created.url, { title: 'new' }, { key: fresh })).statusCode, 200);
  });

  it('PUT renames and deactivates; DELETE removes; an inactive or deleted integration answers 403', async () => {
    // Public: a private project answers these as a wrong key (401), so that its existence
    // cannot be probed (issue 18; test/api/ingestion-limits.test.ts).
    const project = await createProject(t.app, owner, { visibility: 'public' });
    const created = await createIntegration(t, project.id, { name: 'to change' });
    const url = `/projects/${project.id}/alert_management/integrations/${created.id}`;
    const put = await t.api('PUT', url, { body: { name: 'Renamed', active: false } });
    assert.equal(put.statusCode, 200);
    assert.equal(put.json().name, 'Renamed');
    assert.equal(put.json().active, false);
    assert.equal('token' in put.json(), false);
    assert.equal((await notify(t, created.url, { title: 'x' }, { key: created.token })).statusCode, 403);
    const testInactive = await t.api('POST', `${url}/test`, { body: {} });
    assert.equal(testInactive.statusCode, 403);
    assert.equal((await t.api('DELETE', url)).statusCode, 204);
    assert.equal((await t.api('GET', url)).statusCode, 404);
    assert.equal((await notify(t, created.url, { title: 'x' }, { key: created.token })).statusCode, 403);
  });

  it('a sample payload must be valid JSON (400 names the problem); mappings must point into it', async () => {
    const bad = await t.api('POST', base(), { body: { name: 'mapped', payload_example: '{"title": ' } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message.payload_example[0], /is not valid JSON/);
    const notObject = await t.api('POST', base(), { body: { name: 'mapped', payload_example: '[1,2]' } });
    assert.equal(notObject.statusCode, 400);
    assert.deepEqual(notObject.json().message, { payload_example: ['must be a JSON object'] });
    const wrongPath = await t.api('POST', base(), {
      body: {
        name: 'mapped',
        payload_example: '{"alert":{"name":"x"}}',
        payload_attribute_mappings: [{ field_name: 'title', path: ['alert', 'missing'], type: 'string' }],
      },
    });
    assert.equal(wrongPath.statusCode, 400);
    assert.match(wrongPath.json().message.payload_attribute_mappings[0], /not in the payload_example/);
    const wrongType = await t.api('POST', base(), {
      body: {
        name: 'mapped',
        payload_example: '{"alert":{"name":"x"}}',
        payload_attribute_mappings: [{ field_name: 'start_time', path: ['alert', 'name'], type: 'string' }],
      },
    });
    assert.equal(wrongType.statusCode, 400);
    assert.match(wrongType.json().message.payload_attribute_mappings[0], /start_time must be datetime/);
  });

  it('custom mapping feeds alert fields; changing the sample clears the mapping', async () => {
    const example = { alert: { name: 'Disk full', level: 'HIGH', at: '2026-01-01T00:00:00Z' }, host: 'db-1' };
    const created = await createIntegration(t, projectId, {
      name: 'mapped',
      payload_example: JSON.stringify(example),
      payload_attribute_mappings: [
        { field_name: 'title', path: ['alert', 'name'], type: 'string', label: 'Name' },
        { field_name: 'severity', path: ['alert', 'level'], type: 'string' },
        { field_name: 'start_time', path: ['alert', 'at'], type: 'datetime' },
        { field_name: 'hosts', path: ['host'], type: 'string' },
      ],
    });
    const res = await notify(
      t,
      created.url,
      { alert: { name: 'CPU hot', level: 'low', at: '2026-02-01T00:00:00Z' }, host: 'web-7' },
      { key: created.token },
    );
    assert.equal(res.statusCode, 200, res.body);
    const [{ iid, title }] = res.json();
    assert.equal(title, 'CPU hot');
    const alert = (await t.api('GET', `/projects/${projectId}/alert_management/alerts/${iid}`)).json();
    assert.equal(alert.severity, 'low');
    assert.equal(alert.started_at, '2026-02-01T00:00:00.000Z');
    assert.deepEqual(alert.hosts, ['web-7']);

    const url = `${base()}/${created.id}`;
    const same = await t.api('PUT', url, { body: { payload_example: JSON.stringify(example) } });
    assert.equal(same.json().payload_attribute_mappings.length, 4, 'an unchanged sample keeps the mapping');
    const changed = await t.api('PUT', url, { body: { payload_example: '{"other": 1}' } });
    assert.equal(changed.statusCode, 200);
    assert.deepEqual(changed.json().payload_example, { other: 1 });
    assert.deepEqual(changed.json().payload_attribute_mappings, []);
  });

  it('test alerts: Prometheus takes the whole payload; a custom-mapping sample only the first item of alerts', async () => {
    const project = await createProject(t.app, owner);
    const prom = await createIntegration(t, project.id, { name: 'prom', type: 'prometheus' });
    const url = `/projects/${project.id}/alert_management/integrations`;
    const items = [prometheusItem({ annotations: { title: 'First' } }), prometheusItem({ annotations: { title: 'Second' } })];
    const whole = await t.api('POST', `${url}/${prom.id}/test`, { body: alertmanagerPayload(items) });
    assert.equal(whole.statusCode, 200, whole.body);
    assert.deepEqual(
      whole.json().map((a: { title: string }) => a.title),
      ['First', 'Second'],
    );
    const sample = { alerts: [{ name: 'Only me' }, { name: 'Not me' }] };
    const mapped = await createIntegration(t, project.id, {
      name: 'mapped',
      payload_example: JSON.stringify(sample),
      payload_attribute_mappings: [{ field_name: 'title', path: ['name'], type: 'string' }],
    });
    const res = await t.api('POST', `${url}/${mapped.id}/test`, { body: {} });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [{ iid: 3, title: 'Only me' }]);
    const alert = (await t.api('GET', `/projects/${project.id}/alert_management/alerts/${res.json()[0].iid}`)).json();
    assert.deepEqual(alert.payload, { name: 'Only me' });
  });

  // A sample with an `alerts` array maps each item: the paths below are relative to an item.
  const itemMapping = [
    { field_name: 'title', path: ['name'], type: 'string' },
    { field_name: 'severity', path: ['level'], type: 'string' },
    { field_name: 'start_time', path: ['at'], type: 'datetime' },
  ];
  const itemSample = JSON.stringify({ source: 'pager', alerts: [{ name: 'Disk full', level: 'HIGH', at: '2026-01-01T00:00:00Z' }] });

  it('a live notification to a mapping whose sample has alerts maps the item of alerts', async () => {
    const project = await createProject(t.app, owner);
    const mapped = await createIntegration(t, project.id, {
      name: 'items',
      payload_example: itemSample,
      payload_attribute_mappings: itemMapping,
    });
    const live = { source: 'pager', alerts: [{ name: 'CPU hot', level: 'low', at: '2026-02-01T12:00:00Z', team: 'infra' }] };
    const res = await notify(t, mapped.url, live, { key: mapped.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [{ iid: 1, title: 'CPU hot' }]);
    const alert = (await t.api('GET', `/projects/${project.id}/alert_management/alerts/1`)).json();
    assert.equal(alert.title, 'CPU hot');
    assert.equal(alert.severity, 'low');
    assert.equal(alert.started_at, '2026-02-01T12:00:00.000Z');
    assert.deepEqual(alert.payload, live.alerts[0], 'the item is the alert payload');
    assert.deepEqual(alert.custom_fields, { name: 'CPU hot', level: 'low', at: '2026-02-01T12:00:00Z', team: 'infra' });
  });

  it('a multi-item live payload gives one mapped alert per item of alerts', async () => {
    const project = await createProject(t.app, owner);
    const mapped = await createIntegration(t, project.id, {
      name: 'items',
      payload_example: itemSample,
      payload_attribute_mappings: itemMapping,
    });
    const live = {
      alerts: [
        { name: 'First', level: 'medium', at: '2026-03-01T00:00:00Z' },
        'not an object: skipped',
        { name: 'Second', level: 'info', at: '2026-03-02T00:00:00Z' },
        { name: 'Third', level: 'nonsense', at: '2026-03-03T00:00:00Z' },
      ],
    };
    const res = await notify(t, mapped.url, live, { key: mapped.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [
      { iid: 1, title: 'First' },
      { iid: 2, title: 'Second' },
      { iid: 3, title: 'Third' },
    ]);
    const alerts = await Promise.all(
      [1, 2, 3].map(async (iid) => (await t.api('GET', `/projects/${project.id}/alert_management/alerts/${iid}`)).json()),
    );
    assert.deepEqual(
      alerts.map((a) => [a.title, a.severity, a.started_at]),
      [
        ['First', 'medium', '2026-03-01T00:00:00.000Z'],
        ['Second', 'info', '2026-03-02T00:00:00.000Z'],
        ['Third', 'critical', '2026-03-03T00:00:00.000Z'],
      ],
    );
    // The same items again group into the same three alerts (each item fingerprinted alone).
    const again = await notify(t, mapped.url, live, { key: mapped.token });
    assert.deepEqual(
      again.json().map((a: { iid: number }) => a.iid),
      [1, 2, 3],
    );
    // A payload without an `alerts` array is the one item, as a test alert of the sample sends it.
    const bare = await notify(t, mapped.url, { name: 'Bare item', level: 'low' }, { key: mapped.token });
    assert.deepEqual(bare.json(), [{ iid: 4, title: 'Bare item' }]);
  });

  it('an Alertmanager payload to an HTTP integration mapped from an alerts sample: Prometheus rules, mapping per item', async () => {
    const project = await createProject(t.app, owner);
    const sample = alertmanagerPayload([prometheusItem({ labels: { alertname: 'HighLatency', instance: 'web-1', priority: 'P1' } })]);
    const mapped = await createIntegration(t, project.id, {
      name: 'am',
      payload_example: JSON.stringify(sample),
      payload_attribute_mappings: [
        { field_name: 'title', path: ['labels', 'instance'], type: 'string' },
        { field_name: 'severity', path: ['labels', 'priority'], type: 'string' },
      ],
    });
    const items = [
      prometheusItem({ labels: { alertname: 'A', instance: 'db-1', priority: 'P2' } }),
      prometheusItem({ startsAt: '2026-01-02T00:00:00Z', labels: { alertname: 'B', severity: 'warning' } }),
    ];
    const res = await notify(t, mapped.url, alertmanagerPayload(items), { key: mapped.token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().map((a: { title: string }) => a.title),
      ['db-1', 'Latency is high'],
    );
    const [a, b] = await Promise.all(
      res.json().map(async (x: { iid: number }) => (await t.api('GET', `/projects/${project.id}/alert_management/alerts/${x.iid}`)).json()),
    );
    assert.equal(a.severity, 'high', 'a mapped severity goes through the Prometheus aliases');
    assert.equal(a.monitoring_tool, 'Prometheus');
    assert.equal(b.severity, 'low', 'unmapped fields keep the Prometheus rules');
    assert.equal(b.started_at, '2026-01-02T00:00:00.000Z');
  });

  it('lists integrations a page at a time with the pagination headers', async () => {
    const project = await createProject(t.app, owner);
    const made = [];
    for (const name of ['one', 'two', 'three']) made.push(await createIntegration(t, project.id, { name }));
    const url = `/projects/${project.id}/alert_management/integrations`;
    const first = await t.api('GET', url, { query: { per_page: '2' } });
    assert.equal(first.statusCode, 200);
    assert.deepEqual(
      first.json().map((i: { id: number }) => i.id),
      [made[0]?.id, made[1]?.id],
    );
    assert.equal(first.headers['x-total'], '3');
    assert.equal(first.headers['x-total-pages'], '2');
    assert.equal(first.headers['x-page'], '1');
    assert.equal(first.headers['x-per-page'], '2');
    assert.equal(first.headers['x-next-page'], '2');
    assert.equal(first.headers['x-prev-page'], '');
    const link = String(first.headers.link);
    assert.match(link, new RegExp(`<http://basalt.test/api/v4${url}\\?per_page=2&page=2>; rel="next"`));
    assert.match(link, /rel="first"/);
    assert.match(link, /page=2>; rel="last"/);
    const second = await t.api('GET', url, { query: { per_page: '2', page: '2' } });
    assert.equal(second.statusCode, 200);
    assert.deepEqual(
      second.json().map((i: { id: number; name: string }) => [i.id, i.name]),
      [[made[2]?.id, 'three']],
    );
    assert.equal(second.headers['x-page'], '2');
    assert.equal(second.headers['x-next-page'], '');
    assert.equal(second.headers['x-prev-page'], '1');
    assert.match(String(second.headers.link), /page=1>; rel="prev"/);
    const defaults = await t.api('GET', url);
    assert.equal(defaults.headers['x-per-page'], '20');
    assert.equal(defaults.json().length, 3);
    assert.equal((await t.api('GET', url, { query: { page: '0' } })).statusCode, 400);
  });

  it('free tier: one HTTP endpoint per project and no custom mapping', async () => {
    const free = await createTestApp({ sameDatabaseAs: t, config: { tier: 'free' } });
    await settle(free);
    try {
      const user = await createUser(free.app);
      const project = await createProject(free.app, user);
      const url = `/projects/${project.id}/alert_management/integrations`;
      assert.equal((await free.api('POST', url, { body: { name: 'one' } })).statusCode, 201);
      const two = await free.api('POST', url, { body: { name: 'two' } });
      assert.equal(two.statusCode, 422);
      assert.equal((await free.api('POST', url, { body: { name: 'prom', type: 'prometheus' } })).statusCode, 201);
    } finally {
      await free.close();
    }
  });
});

describe('alert iids past the 32-bit column', () => {
  it('are 400 on the API and the page, never a database error', async () => {
    const t = await createTestApp();
    try {
      const owner = await createUser(t.app);
      const project = await createProject(t.app, owner);
      const api = await t.api('GET', `/projects/${project.id}/alert_management/alerts/2147483648`, { token: owner.token });
      assert.equal(api.statusCode, 400);
      const within = await t.api('GET', `/projects/${project.id}/alert_management/alerts/2147483647`, { token: owner.token });
      assert.equal(within.statusCode, 404);
    } finally {
      await t.close();
    }
  });
});
