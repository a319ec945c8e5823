import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Gitlab } from '@gitbeaker/rest';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** A free port, so EXTERNAL_URL (and with it every DSN) names the address the server listens on. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function runClient(dsn: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, 'fixtures', 'sentry-node-client.mjs')], {
      cwd: path.resolve(here, '..', '..'),
      env: { ...process.env, SENTRY_DSN: dsn },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

interface ErrorJson {
  id: number;
  title: string;
  type: string;
  count: number;
  user_count: number;
  platform: string;
}

describe('the real @sentry/node SDK reports into a project', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    t = await createTestApp({ manualClock: false, env: { EXTERNAL_URL: url } });
    await t.app.listen({ host: '127.0.0.1', port });
  });
  after(() => t.close());

  it('two captureException calls from two users and one captureMessage become two errors', async () => {
    const api = new Gitlab({ host: url, token: ROOT_TOKEN });
    const project = await api.Projects.create({ name: 'Shop', path: 'shop' });
    // gitbeaker sends active and integrated in the query string (reference README).
    const settings = await api.ErrorTrackingSettings.create(project.id, true, true);
    assert.equal(settings.active, true);
    assert.equal(settings.integrated, true);
    const keys = await api.ErrorTrackingClientKeys.all(project.id);
    assert.equal(keys.length, 1);
    const dsn = String((keys[0] as Record<string, unknown>).tracker_dsn);
    assert.ok(dsn.startsWith(`http://${String(keys[0]?.public_key)}@127.0.0.1:`), dsn);

    const run = await runClient(dsn);
    assert.equal(run.code, 0, `client exited ${run.code}: ${run.stderr}`);
    assert.match(run.stdout, /"flushed":true/);

    const res = await fetch(`${url}/api/v4/projects/${project.id}/error_tracking/errors?status=unresolved&sort=frequency`, {
      headers: { 'private-token': ROOT_TOKEN },
    });
    const errors = (await res.json()) as ErrorJson[];
    assert.equal(errors.length, 2, JSON.stringify(errors));
    const [exception, message] = errors;
    assert.equal(exception?.title, 'PaymentDeclinedError: card declined for 20');
    assert.equal(exception?.count, 2);
    assert.equal(exception?.user_count, 2);
    assert.equal(exception?.platform, 'node');
    assert.equal(message?.title, 'Nightly export finished late');
    assert.equal(message?.count, 1);

    const events = await fetch(`${url}/api/v4/projects/${project.id}/error_tracking/errors/${exception?.id}/events`, {
      headers: { 'private-token': ROOT_TOKEN },
    });
    const list = (await events.json()) as { user: string; release: string; environment: string }[];
    assert.deepEqual(list.map((e) => e.user).sort(), ['id:alice', 'id:bob']);
    assert.ok(list.every((e) => e.release === 'e2e-app@1.0.0' && e.environment === 'e2e'));
    const details = await fetch(`${url}/api/v4/projects/${project.id}/error_tracking/errors/${exception?.id}`, {
      headers: { 'private-token': ROOT_TOKEN },
    });
    const trace = ((await details.json()) as { stack_trace: { frames: { function: string; in_app: boolean }[] } }).stack_trace;
    assert.equal(trace.frames[0]?.function, 'chargeCard', 'the raising frame comes first');
    assert.equal(trace.frames[0]?.in_app, true);
    const health = await fetch(`${url}/api/v4/projects/${project.id}/error_tracking/release_health`, {
      headers: { 'private-token': ROOT_TOKEN },
    });
    // The SDK opens a release-health session when it starts (a `session` envelope item).
    const releases = (await health.json()) as { release: string; environment: string; sessions: number }[];
    assert.deepEqual(
      releases.map((r) => [r.release, r.environment, r.sessions]),
      [['e2e-app@1.0.0', 'e2e', 1]],
    );
  });
});
