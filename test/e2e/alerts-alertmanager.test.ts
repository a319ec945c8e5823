import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createIntegration, pathOf, settle } from '../helpers/alerts.js';
import { alertmanagerSkip, startAlertmanager, waitFor, type RunningAlertmanager } from '../helpers/alertmanager.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser } from '../helpers/factories.js';

describe('Prometheus Alertmanager 0.25 posting to the Prometheus notify endpoint', { skip: alertmanagerSkip }, () => {
  let t: TestApp;
  let projectId: number;
  let alertmanager: RunningAlertmanager | null = null;

  before(async () => {
    t = await createTestApp({ manualClock: false });
    await settle(t);
    const basalt = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const owner = await createUser(t.app);
    projectId = (await createProject(t.app, owner)).id;
    const integration = await createIntegration(t, projectId, { name: 'Alertmanager', type: 'prometheus' });
    alertmanager = await startAlertmanager(`${basalt}${pathOf(integration.url)}`, integration.token);
  });

  after(async () => {
    await alertmanager?.stop();
    await t.close();
  });

  const postAlerts = (alerts: unknown[]) => alertmanager!.post(alerts);
  const listAlerts = async (): Promise<{ iid: number; title: string; severity: string; status: string; full_query: string }[]> =>
    (await t.api('GET', `/projects/${projectId}/alert_management/alerts`, { query: { per_page: '100' } })).json();

  it('fired alerts arrive with their title and severity, then resolve when Alertmanager sends them resolved', async () => {
    const startsAt = new Date(Date.now() - 60_000).toISOString();
    const alerts = [
      {
        labels: { alertname: 'DiskFull', severity: 'warning', instance: 'db-1' },
        annotations: { title: 'Disk full on db-1', description: 'Less than 1% left' },
        startsAt,
        generatorURL: 'http://prometheus.test:9090/graph?g0.expr=node_filesystem_avail_bytes+%3C+1e9',
      },
      {
        labels: { alertname: 'HighErrorRate', severity: 'P1' },
        annotations: { summary: 'Errors above 5%' },
        startsAt,
        generatorURL: 'http://prometheus.test:9090/graph?g0.expr=rate(errors[5m])',
      },
    ];
    await postAlerts(alerts);
    const arrived = await waitFor('both alerts to arrive', 30_000, async () => {
      const list = await listAlerts();
      return list.length >= 2 ? list : undefined;
    }).catch((error: Error) => {
      throw new Error(`${error.message}\nalertmanager output:\n${alertmanager?.output() ?? ''}`);
    });
    const disk = arrived.find((a) => a.title === 'Disk full on db-1');
    const errors = arrived.find((a) => a.title === 'Errors above 5%');
    assert.ok(disk && errors, JSON.stringify(arrived));
    assert.equal(disk.severity, 'low');
    assert.equal(disk.status, 'triggered');
    assert.equal(disk.full_query, 'node_filesystem_avail_bytes < 1e9');
    assert.equal(errors.severity, 'critical');

    const endsAt = new Date(Date.now() - 1000).toISOString();
    await postAlerts(alerts.map((a) => ({ ...a, endsAt })));
    const resolved = await waitFor('both alerts to resolve', 30_000, async () => {
      const list = await listAlerts();
      return list.filter((a) => a.status === 'resolved').length >= 2 ? list : undefined;
    });
    assert.equal(resolved.length, 2, 'resolution updates the same alerts instead of creating new ones');
    assert.deepEqual(resolved.map((a) => a.iid).sort(), [disk.iid, errors.iid].sort());
  });
});
