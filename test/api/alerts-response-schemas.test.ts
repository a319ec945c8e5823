// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIntegration, notify, settle } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser } from '../helpers/factories.js';

/**
 * Answers are serialised through their routes' response schemas, which drop whatever they do
 * not declare: these check that client data (payloads, samples, custom fields) comes back
 * whole, however it nests, and that every presenter field keeps its type.
 */
describe('alert answers keep client data whole through their response schemas', () => {
  let t: TestApp;
  let projectId: number;
  const nested = {
    title: 'Nested payload',
    severity: 'LOW',
    team: { name: 'db', on_call: [{ who: 'ana', since: null, tags: ['a', { deep: { deeper: [1, 2.5, true, false, null] } }] }] },
    empty: {},
    list: [[], [[]], {}],
    text: 'ünïcødé "quoted" \\ \n line',
    number: -0.125,
  };
  const base = () => `/projects/${projectId}/alert_management`;

  before(async () => {
    t = await createTestApp({ env: { RATE_LIMITS: 'alerts=1000/m' } });
    await settle(t);
    const owner = await createUser(t.app);
    projectId = (await createProject(t.app, owner)).id;
  });
  after(() => t.close());

  it('an alert shows its nested payload and custom fields as sent, in the detail and the list', async () => {
    const integration = await createIntegration(t, projectId, { name: 'nested' });
    const res = await notify(t, integration.url, nested, { key: integration.token });
    assert.equal(res.statusCode, 200, res.body);
    const [{ iid }] = res.json();
    const alert = (await t.api('GET', `${base()}/alerts/${iid}`)).json();
    assert.deepEqual(alert.payload, nested);
    assert.deepEqual(alert.custom_fields, { team: nested.team, empty: {}, list: nested.list, text: nested.text, number: -0.125 });
    assert.equal(alert.severity, 'low');
    assert.deepEqual(alert.integration, { id: integration.id, name: 'nested', type: 'http' });
    assert.equal(alert.ended_at, null);
    assert.equal(alert.issue_iid, null);
    assert.deepEqual(alert.hosts, []);
    const listed = (await t.api('GET', `${base()}/alerts`)).json();
    assert.deepEqual(listed.find((a: { iid: number }) => a.iid === iid).payload, nested);
    assert.deepEqual(Object.keys(alert).sort(), [
      'created_at',
      'custom_fields',
      'description',
      'details_url',
      'ended_at',
      'environment_name',
      'event_count',
      'fingerprint',
      'full_query',
      'hosts',
      'id',
      'iid',
      'incident_markdown',
      'integration',
      'issue_id',
      'issue_iid',
      'monitoring_tool',
      'payload',
      'project_id',
      'runbook',
      'service',
      'severity',
      'started_at',
      'status',
      'title',
      'updated_at',
      'y_label',
    ]);
  });

  it('an integration shows its nested sample and its mapping paths with indexes; the key only on create and reset', async () => {
    const sample = { alerts: [{ name: 'x', labels: { a: [{ b: { c: null } }] } }] };
    const created = await createIntegration(t, projectId, {
      name: 'sampled',
      payload_example: JSON.stringify(sample),
      payload_attribute_mappings: [{ field_name: 'title', path: ['labels', 'a', 0, 'b'], type: 'string', label: null }],
    });
    assert.match(created.token, /\S/);
    const shown = (await t.api('GET', `${base()}/integrations/${created.id}`)).json();
    assert.deepEqual(shown.payload_example, sample);
    // Compared with what is stored: the request's own coercion of the body is not under test here.
    const row = await t.database.handle.db
      .selectFrom('alert_integrations')
      .select('payload_attribute_mappings')
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(shown.payload_attribute_mappings, JSON.parse(row.payload_attribute_mappings ?? 'null'));
    assert.equal(shown.payload_attribute_mappings[0].field_name, 'title');
    // An index stays a number and a null label stays null (a string branch first coerced them).
    assert.deepEqual(shown.payload_attribute_mappings[0].path, ['labels', 'a', 0, 'b']);
    assert.equal(shown.payload_attribute_mappings[0].label, null);
    assert.equal(shown.token, undefined);
    assert.equal(shown.active, true);
    const reset = (await t.api('POST', `${base()}/integrations/${created.id}/reset_token`)).json();
    assert.match(reset.token, /\S/);
    const removed = await t.api('DELETE', `${base()}/integrations/${created.id}`);
    assert.equal(removed.statusCode, 204);
    assert.equal(removed.body, '');
  });
});
