import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './chromium.js';

/** Debian's Prometheus Alertmanager (package prometheus-alertmanager). */
export const ALERTMANAGER = '/usr/bin/prometheus-alertmanager';
export const alertmanagerSkip: string | false = existsSync(ALERTMANAGER)
  ? false
  : `${ALERTMANAGER} is not installed (Debian package prometheus-alertmanager)`;

/** Polls until `check` returns a value, at most `ms` milliseconds. */
export async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export interface RunningAlertmanager {
  url: string;
  output: () => string;
  /** Posts alerts to its API (`/api/v2/alerts`), as Prometheus does. */
  post(alerts: unknown[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real Alertmanager on 127.0.0.1 whose one receiver posts to `webhook` with the integration's
 * key, grouping by alert name and sending at once (1 s waits) with resolutions.
 */
export async function startAlertmanager(webhook: string, key: string): Promise<RunningAlertmanager> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-alertmanager-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  writeFileSync(
    path.join(dir, 'alertmanager.yml'),
    [
      'global:',
      '  resolve_timeout: 5m', // alerts posted without endsAt stay firing until resolved explicitly
      'route:',
      '  receiver: basalt',
      "  group_by: ['alertname']",
      '  group_wait: 1s',
      '  group_interval: 1s',
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: basalt',
      '    webhook_configs:',
      `      - url: '${webhook}'`,
      '        send_resolved: true',
      '        http_config:',
      '          authorization:',
      '            type: Bearer',
      `            credentials: '${key}'`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  let output = '';
  const child: ChildProcess = spawn(
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
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('Alertmanager to be ready', 20_000, async () => ((await fetch(`${url}/-/ready`)).ok ? true : undefined));
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return {
    url,
    output: () => output,
    async post(alerts) {
      const res = await fetch(`${url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alerts),
      });
      if (res.status !== 200) throw new Error(`Alertmanager answered ${res.status}: ${await res.text()}`);
    },
    stop,
  };
}
