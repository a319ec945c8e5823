import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/chromium.js';
import { enableTracking } from '../helpers/sentry.js';

const PYTHON = '/usr/bin/python3';
const CLIENT = path.join(import.meta.dirname, 'fixtures', 'sentry_python_client.py');

/** Debian's python3-sentry-sdk, never a pip install: its version, or the reason to skip. */
function sdkVersion(): string | { skip: string } {
  const probe = spawnSync(PYTHON, ['-c', 'import sentry_sdk; print(sentry_sdk.VERSION)'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { skip: `${PYTHON} cannot import sentry_sdk (Debian package python3-sentry-sdk)` };
  return probe.stdout.trim();
}
const version = sdkVersion();
const skip = typeof version === 'string' ? false : version.skip;

function runClient(dsn: string, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Debian's interpreter with its own modules only: no user site, no pyenv on the way.
    const child = spawn(PYTHON, ['-s', CLIENT], {
      env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', SENTRY_DSN: dsn, SENTRY_DEBUG: '1', ...extraEnv },
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

/** A server listening on loopback (EXTERNAL_URL, and with it the DSN, names its address) with these RATE_LIMITS. */
async function liveServer(rateLimits: string): Promise<{ t: TestApp; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await createTestApp({ manualClock: false, env: { EXTERNAL_URL: base, RATE_LIMITS: rateLimits } });
  await t.app.listen({ host: '127.0.0.1', port });
  return { t, base };
}

async function trackedProject(t: TestApp, path: string): Promise<{ projectId: number; dsn: string }> {
  const created = await t.api('POST', '/projects', { body: { name: path, path } });
  assert.equal(created.statusCode, 201, created.body);
  const projectId = created.json<{ id: number }>().id;
  return { projectId, dsn: (await enableTracking(t, projectId)).dsn };
}

interface ErrorJson {
  id: number;
  title: string;
  type: string;
  count: number;
  user_count: number;
  platform: string;
}

describe(`the real sentry_sdk ${typeof version === 'string' ? version : ''} (python3-sentry-sdk) reports into a project`, { skip }, () => {
  let t: TestApp;
  let base: string;
  const get = async <T>(url: string): Promise<T> => {
    const res = await fetch(`${base}/api/v4${url}`, { headers: { 'private-token': ROOT_TOKEN } });
    assert.equal(res.status, 200, url);
    return (await res.json()) as T;
  };

  before(async () => {
    // Named explicitly: the run sends about ten requests with one key, all under the limit.
    ({ t, base } = await liveServer('collector=100/m,collector_project=1000/m'));
  });
  after(() => t?.close());

  it('exceptions, a message, users, an attachment, a transaction, a dropped event, application and request sessions', async () => {
    const { projectId, dsn } = await trackedProject(t, 'py-shop');
    const run = await runClient(dsn);
    assert.equal(run.code, 0, `client exited ${run.code}: ${run.stderr}`);
    // Every request the SDK made was answered 2xx: it logs anything else as an error.
    assert.doesNotMatch(run.stderr, /Unexpected status code|Rate-limited|Internal error in sentry_sdk/, run.stderr);
    const ids = JSON.parse(run.stdout) as { declined: string[]; message: string; with_attachment: string; request: string };
    assert.equal(ids.declined.length, 2);

    const errors = await get<ErrorJson[]>(`/projects/${projectId}/error_tracking/errors?sort=frequency&status=unresolved`);
    assert.deepEqual(errors.map((e) => [e.title, e.count, e.user_count, e.platform]).sort(), [
      ["KeyError: 'items'", 1, 1, 'python'],
      ['Nightly export finished late', 1, 1, 'python'],
      // Two ERROR log records of one template: the logging integration's `logentry` with params.
      ['Order 42 failed to sync', 2, 1, 'python'],
      ['PaymentDeclined: card declined for 20', 2, 2, 'python'],
      ['TimeoutError: upstream timed out', 1, 1, 'python'],
    ]);
    // What before_send dropped never arrived; the SDK's client report about it was accepted.
    assert.ok(!errors.some((e) => e.title === 'health check noise'));
    // The transaction is accepted and is not an error.
    assert.ok(!errors.some((e) => e.title.includes('nightly-export')));

    const declined = errors.find((e) => e.title.startsWith('PaymentDeclined')) as ErrorJson;
    const events = await get<{ event_id: string; user: string; release: string; environment: string }[]>(
      `/projects/${projectId}/error_tracking/errors/${declined.id}/events`,
    );
    assert.deepEqual(events.map((e) => e.user).sort(), ['id:alice', 'id:bob']);
    assert.deepEqual(events.map((e) => e.event_id.replace(/-/g, '')).sort(), [...ids.declined].sort());
    assert.ok(
      events.every((e) => e.release === 'py-shop@2.0.0' && e.environment === 'e2e-py'),
      JSON.stringify(events),
    );
    const details = await get<{ stack_trace: { frames: { function: string; in_app: boolean }[] } }>(
      `/projects/${projectId}/error_tracking/errors/${declined.id}`,
    );
    assert.deepEqual(
      details.stack_trace.frames.slice(0, 3).map((f) => f.function),
      ['charge_card', 'checkout', 'main'],
      'the raising frame comes first',
    );

    // The event sent with an attachment (an envelope) is stored under the id the SDK gave it.
    const keyError = errors.find((e) => e.title.startsWith('KeyError')) as ErrorJson;
    const keyEvents = await get<{ event_id: string; user: string }[]>(`/projects/${projectId}/error_tracking/errors/${keyError.id}/events`);
    assert.deepEqual(
      keyEvents.map((e) => [e.event_id.replace(/-/g, ''), e.user]),
      [[ids.with_attachment, 'id:carol']],
    );

    // Release health: the run's application session (a `session` item; it saw errors, so it ended
    // errored) and three request sessions the SDK aggregated (a `sessions` item; one errored).
    const health = await get<Record<string, unknown>[]>(`/projects/${projectId}/error_tracking/release_health`);
    assert.deepEqual(health, [
      { release: 'py-shop@2.0.0', environment: 'e2e-py', sessions: 4, exited: 2, errored: 2, crashed: 0, abnormal: 0, crash_free_rate: 1 },
    ]);
    const timeout = errors.find((e) => e.title.startsWith('TimeoutError')) as ErrorJson;
    const requestEvents = await get<{ event_id: string; user: string }[]>(
      `/projects/${projectId}/error_tracking/errors/${timeout.id}/events`,
    );
    assert.deepEqual(
      requestEvents.map((e) => [e.event_id.replace(/-/g, ''), e.user]),
      [[ids.request, 'id:dave']],
    );
  });
});

describe('the collector’s rate limit, as sentry_sdk reads it', { skip }, () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    ({ t, base } = await liveServer('collector=2/m,collector_project=1000/m'));
  });
  after(() => t?.close());

  it('the third event in a minute gets 429 with X-Sentry-Rate-Limits; the SDK holds back the rest', async () => {
    const { projectId, dsn } = await trackedProject(t, 'py-burst');
    const run = await runClient(dsn, { SCENARIO: 'burst', BURST: '5' });
    assert.equal(run.code, 0, `client exited ${run.code}: ${run.stderr}`);
    assert.equal(JSON.parse(run.stdout).burst.length, 5);
    // The SDK understood the header (not only the status) and sent nothing more.
    assert.match(run.stderr, /Rate-limited via x-sentry-rate-limits/);
    assert.equal(run.stderr.match(/Sending event,/g)?.length, 3, run.stderr);
    const res = await fetch(`${base}/api/v4/projects/${projectId}/error_tracking/errors`, { headers: { 'private-token': ROOT_TOKEN } });
    const errors = (await res.json()) as ErrorJson[];
    assert.deepEqual(
      errors.map((e) => e.count),
      [2],
    );
  });
});
