import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createIntegration, pathOf, settle, type CreatedIntegration } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser } from '../helpers/factories.js';

const ALERTMANAGER = '/usr/bin/prometheus-alertmanager';
const skip = existsSync(ALERTMANAGER) ? false : `${ALERTMANAGER} is not installed (Debian package prometheus-alertmanager)`;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls until `check` returns a value, at most `ms` milliseconds. */
async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('Prometheus Alertmanager 0.25 posting to the Prometheus notify endpoint', { skip }, () => {
  let t: TestApp;
  let projectId: number;
  let integration: CreatedIntegration;
  let alertmanager: ChildProcess | null = null;
  let amUrl = '';
  let amOutput = '';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-alertmanager-'));

  before(async () => {
    t = await createTestApp({ manualClock: false });
    await settle(t);
    const basalt = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const owner = await createUser(t.app);
    projectId = (await createProject(t.app, owner)).id;
    integration = await createIntegration(t, projectId, { name: 'Alertmanager', type: 'prometheus' });

    const port = await freePort();
    amUrl = `http://127.0.0.1:${port}`;
    writeFileSync(
      path.join(dir, 'alertmanager.yml'),
      [
        'global:',
        '  resolve_timeout: 5s',
        'route:',
        '  receiver: basalt',
        "  group_by: ['alertname']",
        '  group_wait: 1s',
        '  group_interval: 1s',
        '  repeat_interval: 1h',
        'receivers:',
        '  - name: basalt',
        '    webhook_configs:',
        `      - url: '${basalt}${pathOf(integration.url)}'`,
        '        send_resolved: true',
        '        http_config:',
        '          authorization:',
        '            type: Bearer',
        `            credentials: '${integration.token}'`,
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    alertmanager = spawn(
      ALERTMANAGER,
      [
        `--config.file=${path.join(dir, 'alertmanager.yml')}`,
        `--storage.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    alertmanager.stdout?.on('data', (c: Buffer) => (amOutput += c.toString()));
    alertmanager.stderr?.on('data', (c: Buffer) => (amOutput += c.toString()));
    await waitFor('Alertmanager to be ready', 20_000, async () => ((await fetch(`${amUrl}/-/ready`)).ok ? true : undefined)).catch(
      (error: Error) => {
        throw new Error(`${error.message}\n${amOutput}`);
      },
    );
  });

  after(async () => {
    if (alertmanager && alertmanager.exitCode === null) {
      const exited = new Promise((resolve) => alertmanager?.once('exit', resolve));
      alertmanager.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (alertmanager.exitCode === null) alertmanager.kill('SIGKILL');
    }
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const postAlerts = async (alerts: unknown[]) => {
    const res = await fetch(`${amUrl}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
    });
    assert.equal(res.status, 200, await res.text());
  };
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
      throw new Error(`${error.message}\nalertmanager output:\n${amOutput}`);
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
