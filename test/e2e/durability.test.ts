import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { envelope, envelopePath, hex32, sentryAuth } from '../helpers/sentry.js';
import {
  LIVE_ROOT_PASSWORD,
  LIVE_ROOT_TOKEN,
  codeFlow,
  liveApi,
  livePostgres,
  liveSqlite,
  registerLiveApp,
  sha256,
  signIn,
  type LiveClient,
  type LiveDatabase,
} from '../helpers/live.js';

/**
 * Durability (issue 10, deliverable 1): alert ingestion, envelope ingestion, OAuth refresh
 * grants and personal token creation (whose audit events are stored with each commit, issue 24)
 * run concurrently against the real server process; the process is SIGKILLed
 * mid-run and started again on the same data. Everything answered 2xx must be stored, and
 * nothing half-written may be visible. Bounded: at most MAX_REQUESTS requests in about 5 s.
 *
 * Storage moves killed halfway are proven by test/e2e/git-smart-http.test.ts
 * "a move whose worker process is killed mid-copy finishes after restart, losing nothing".
 */
const MAX_REQUESTS = 600;
const KILL_AFTER_ANSWERS = 250;
const KILL_DEADLINE_MS = 5_000;
const CHAINS = 4;

interface Setup {
  projectId: number;
  notifyPath: string;
  alertKey: string;
  sentryKey: string;
  client: LiveClient;
  refresh: string[];
}

async function prepare(base: string): Promise<Setup> {
  const project = await liveApi(base, 'POST', '/projects', LIVE_ROOT_TOKEN, { name: 'durable', path: 'durable' });
  assert.equal(project.status, 201, project.text);
  const projectId = (project.json() as { id: number }).id;
  const integration = await liveApi(base, 'POST', `/projects/${projectId}/alert_management/integrations`, LIVE_ROOT_TOKEN, {
    name: 'load',
    type: 'http',
    active: true,
  });
  assert.equal(integration.status, 201, integration.text);
  const { url, token } = integration.json() as { url: string; token: string };
  const settings = await liveApi(base, 'PUT', `/projects/${projectId}/error_tracking/settings`, LIVE_ROOT_TOKEN, {
    active: true,
    integrated: true,
  });
  assert.equal(settings.status, 200, settings.text);
  const keys = (await liveApi(base, 'GET', `/projects/${projectId}/error_tracking/client_keys`, LIVE_ROOT_TOKEN)).json() as {
    public_key: string;
  }[];
  const client = await registerLiveApp(base, LIVE_ROOT_TOKEN);
  const jar = await signIn(base, 'root', LIVE_ROOT_PASSWORD);
  const refresh: string[] = [];
  for (let i = 0; i < CHAINS; i += 1) refresh.push((await codeFlow(base, jar, client)).refresh_token);
  return { projectId, notifyPath: new URL(url).pathname, alertKey: token, sentryKey: keys[0]?.public_key ?? '', client, refresh };
}

interface Outcome {
  alerts: { iid: number; title: string }[];
  events: string[];
  /** Personal tokens answered 201, by id. */
  tokens: number[];
  /** Per chain: access tokens answered 200, in order, and whether a refresh was in flight at the kill. */
  chains: { tokens: string[]; lastRefresh: string; inFlight: boolean }[];
  answered: number;
  sent: number;
}

/** Drives the three kinds of request until the server is killed (or the budget runs out). */
async function driveAndKill(server: ServerProcess, setup: Setup): Promise<Outcome> {
  const base = server.url;
  const out: Outcome = {
    alerts: [],
    events: [],
    tokens: [],
    chains: setup.refresh.map((r) => ({ tokens: [], lastRefresh: r, inFlight: false })),
    answered: 0,
    sent: 0,
  };
  let killed = false;
  let sequence = 0;
  const started = Date.now();
  const budget = () => !killed && out.sent < MAX_REQUESTS;
  const kill = () => {
    if (killed) return;
    killed = true;
    server.child.kill('SIGKILL');
  };
  const killer = setTimeout(kill, KILL_DEADLINE_MS);

  const alertWorker = async () => {
    while (budget()) {
      const title = `durable alert ${(sequence += 1)}`;
      out.sent += 1;
      try {
        const res = await fetch(`${base}${setup.notifyPath}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.alertKey}` },
          body: JSON.stringify({ title, description: 'load', fingerprint: title, monitoring_tool: 'durability' }),
        });
        const body = await res.text();
        if (res.status === 200) {
          for (const item of JSON.parse(body) as { iid: number; title: string }[]) out.alerts.push(item);
          out.answered += 1;
        } else assert.fail(`notify answered ${res.status}: ${body}`);
      } catch (error) {
        if (!killed) throw error;
      }
      if (out.answered >= KILL_AFTER_ANSWERS) kill();
    }
  };
  const eventWorker = async () => {
    while (budget()) {
      const id = hex32(Date.now() * 1000 + (sequence += 1));
      out.sent += 1;
      try {
        const res = await fetch(`${base}${envelopePath(setup.projectId)}`, {
          method: 'POST',
          headers: { 'x-sentry-auth': sentryAuth(setup.sentryKey) },
          body: envelope({ event_id: id }, [
            { type: 'event', payload: { event_id: id, level: 'error', platform: 'node', message: `durable ${sequence % 7}` } },
          ]),
        });
        const body = await res.text();
        if (res.status === 200) {
          assert.equal((JSON.parse(body) as { id: string }).id, id);
          out.events.push(id);
          out.answered += 1;
        } else assert.fail(`envelope answered ${res.status}: ${body}`);
      } catch (error) {
        if (!killed) throw error;
      }
      if (out.answered >= KILL_AFTER_ANSWERS) kill();
    }
  };
  const tokenWorker = async () => {
    while (budget()) {
      out.sent += 1;
      try {
        const res = await fetch(`${base}/api/v4/user/personal_access_tokens`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'private-token': LIVE_ROOT_TOKEN },
          body: JSON.stringify({ name: `durable ${(sequence += 1)}`, scopes: ['read_api'] }),
        });
        const body = await res.text();
        if (res.status === 201) {
          out.tokens.push((JSON.parse(body) as { id: number }).id);
          out.answered += 1;
        } else assert.fail(`token creation answered ${res.status}: ${body}`);
      } catch (error) {
        if (!killed) throw error;
      }
      if (out.answered >= KILL_AFTER_ANSWERS) kill();
    }
  };
  const chainWorker = async (chain: Outcome['chains'][number]) => {
    while (budget()) {
      out.sent += 1;
      chain.inFlight = true;
      try {
        const res = await fetch(`${base}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'refresh_token',
            refresh_token: chain.lastRefresh,
            client_id: setup.client.clientId,
            client_secret: setup.client.secret,
          }),
        });
        const body = await res.text();
        if (res.status !== 200) assert.fail(`refresh answered ${res.status}: ${body}`);
        const tokens = JSON.parse(body) as { access_token: string; refresh_token: string };
        chain.tokens.push(tokens.access_token);
        chain.lastRefresh = tokens.refresh_token;
        chain.inFlight = false;
        out.answered += 1;
      } catch (error) {
        if (!killed) throw error;
        return;
      }
      if (out.answered >= KILL_AFTER_ANSWERS) kill();
    }
  };
  await Promise.all([
    alertWorker(),
    alertWorker(),
    alertWorker(),
    eventWorker(),
    eventWorker(),
    eventWorker(),
    tokenWorker(),
    tokenWorker(),
    ...out.chains.map(chainWorker),
  ]);
  clearTimeout(killer);
  kill();
  await new Promise((resolve) =>
    server.child.exitCode !== null || server.child.signalCode ? resolve(null) : server.child.once('exit', resolve),
  );
  assert.ok(Date.now() - started < 15_000, 'the load phase stayed bounded');
  return out;
}

async function verify(base: string, db: LiveDatabase, setup: Setup, out: Outcome): Promise<void> {
  // Alerts: every answered iid holds the answered title, with its payload; nothing half-written.
  const alerts = await db.query<{ iid: number; title: string; payload: string; events: number }>(
    'select iid, title, payload, events from alerts where project_id = ?',
    [setup.projectId],
  );
  const byIid = new Map(alerts.map((a) => [Number(a.iid), a]));
  for (const answered of out.alerts) assert.equal(byIid.get(answered.iid)?.title, answered.title, `alert ${answered.iid} is stored`);
  for (const alert of alerts) {
    assert.ok(Number(alert.events) >= 1, `alert ${alert.iid} counts its event`);
    assert.equal((JSON.parse(alert.payload) as { title: string }).title, alert.title, `alert ${alert.iid} holds its payload`);
  }
  assert.equal(new Set(alerts.map((a) => a.title)).size, alerts.length, 'no alert is stored twice');
  const [counter] = await db.query<{ last_value: number }>(
    "select last_value from internal_ids where project_id = ? and usage = 'alerts'",
    [setup.projectId],
  );
  assert.ok(
    Number(counter?.last_value ?? 0) >= Math.max(0, ...alerts.map((a) => Number(a.iid))),
    'the iid counter is ahead of every alert',
  );

  // Error events: every answered id stored once, every event has its error, counts agree.
  const events = await db.query<{ event_id: string; error_id: number }>(
    'select event_id, error_id from error_tracking_error_events where project_id = ?',
    [setup.projectId],
  );
  const stored = new Set(events.map((e) => e.event_id));
  for (const id of out.events) assert.ok(stored.has(id), `event ${id} is stored`);
  assert.equal(stored.size, events.length, 'no event is stored twice');
  const errors = await db.query<{ id: number; events_count: number }>(
    'select id, events_count from error_tracking_errors where project_id = ?',
    [setup.projectId],
  );
  const perError = new Map<number, number>();
  for (const e of events) perError.set(Number(e.error_id), (perError.get(Number(e.error_id)) ?? 0) + 1);
  for (const error of errors)
    assert.equal(Number(error.events_count), perError.get(Number(error.id)) ?? 0, `error ${error.id} counts its events`);
  for (const id of perError.keys())
    assert.ok(
      errors.some((e) => Number(e.id) === id),
      `event's error ${id} exists`,
    );

  // Audit: every answered token has its creation event once (stored with it, in its commit's
  // row of audit_event_sets), and no event names a token that was not stored.
  const listed = await liveApi(base, 'GET', '/audit_events?per_page=1', LIVE_ROOT_TOKEN);
  assert.equal(listed.status, 200, listed.text);
  const audited = await db.query<{ target_id: number }>(
    "select target_id from audit_events where event_name = 'personal_access_token_created' and target_details like 'durable %'",
  );
  const auditedIds = audited.map((row) => Number(row.target_id));
  assert.equal(new Set(auditedIds).size, auditedIds.length, 'no creation is recorded twice');
  for (const id of out.tokens) assert.ok(auditedIds.includes(id), `token ${id}'s creation is recorded`);
  const storedTokens = new Set(
    (await db.query<{ id: number }>("select id from personal_access_tokens where name like 'durable %'")).map((row) => Number(row.id)),
  );
  for (const id of auditedIds) assert.ok(storedTokens.has(id), `the recorded token ${id} exists`);
  assert.equal(auditedIds.length, storedTokens.size, 'every stored token is recorded');

  // OAuth: every token row belongs to a family that a code started, and a family has at most
  // one live token (rotation is atomic); every answered access token is stored.
  const tokens = await db.query<{ id: number; token_digest: string; family: string; revoked: number; previous_id: number | null }>(
    'select id, token_digest, family, revoked, previous_id from oauth_access_tokens',
  );
  const families = new Set((await db.query<{ family: string }>('select family from oauth_access_grants')).map((g) => g.family));
  const ids = new Set(tokens.map((t) => Number(t.id)));
  const live = new Map<string, number>();
  for (const token of tokens) {
    assert.ok(token.family && families.has(token.family), `token ${token.id} has its family`);
    if (token.previous_id !== null) assert.ok(ids.has(Number(token.previous_id)), `token ${token.id}'s predecessor exists`);
    if (Number(token.revoked) === 0) live.set(token.family, (live.get(token.family) ?? 0) + 1);
  }
  for (const [family, count] of live) assert.equal(count, 1, `family ${family} has one live token`);
  const byId = new Map(tokens.map((t) => [Number(t.id), t]));
  // An access token is `bso_<row id>_<secret>` and its row keeps the secret's digest.
  const rowOf = (access: string) => {
    const [, id, secret] = /^bso_([0-9]+)_(.+)$/.exec(access) ?? [];
    const row = byId.get(Number(id));
    return row && secret !== undefined && row.token_digest === sha256(secret) ? row : undefined;
  };
  for (const chain of out.chains) {
    for (const access of chain.tokens) assert.ok(rowOf(access), 'an answered access token is stored');
    const last = chain.tokens.at(-1);
    if (!last) continue;
    const info = await fetch(`${base}/oauth/token/info`, { headers: { authorization: `Bearer ${last}` } });
    if (!chain.inFlight) assert.equal(info.status, 200, 'the last token of an idle chain works after restart');
    else {
      // A refresh was in flight at the kill: either it committed (this token was rotated out,
      // and a successor exists) or it did not (this token still works).
      const row = rowOf(last);
      const succeeded = tokens.some((t) => row && Number(t.previous_id) === Number(row.id));
      assert.equal(info.status, succeeded ? 401 : 200, 'an in-flight refresh either fully happened or not at all');
    }
  }
}

async function runScenario(db: LiveDatabase, dataDir: string): Promise<void> {
  const env = {
    ...db.env,
    DATA_DIR: dataDir,
    BASALT_ROOT_TOKEN: LIVE_ROOT_TOKEN,
    BASALT_ROOT_PASSWORD: LIVE_ROOT_PASSWORD,
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
    RUN_JOBS: 'false',
    LOG_LEVEL: 'warn',
    // The load comes from one address to one key and one integration: the default ingestion
    // limits (issue 18) would refuse most of it; the other defaults stay.
    RATE_LIMITS: 'sign_in=10/m,user_code=10/m',
  };
  const first = await startServer({ ...env, LOG_LEVEL: 'info' });
  let second: ServerProcess | null = null;
  try {
    const setup = await prepare(first.url);
    const out = await driveAndKill(first, setup);
    assert.ok(
      out.alerts.length > 0 && out.events.length > 0 && out.tokens.length > 0,
      `every kind was answered before the kill (${JSON.stringify(out.sent)})`,
    );
    assert.ok(
      out.chains.some((c) => c.tokens.length > 0),
      'refresh grants were answered before the kill',
    );
    process.stdout.write(
      `# answered before the kill: ${out.alerts.length} alerts, ${out.events.length} events, ${out.tokens.length} tokens, ${out.chains.reduce((n, c) => n + c.tokens.length, 0)} refreshes (${out.chains.filter((c) => c.inFlight).length} in flight) of ${out.sent} sent\n`,
    );
    second = await startServer({ ...env, LOG_LEVEL: 'info' });
    await verify(second.url, db, setup, out);
    // The restarted server carries on: the next alert gets a fresh iid.
    const next = await fetch(`${second.url}${setup.notifyPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.alertKey}` },
      body: JSON.stringify({ title: 'after restart' }),
    });
    assert.equal(next.status, 200, await next.clone().text());
    const [created] = (await next.json()) as { iid: number }[];
    assert.ok((created?.iid ?? 0) > Math.max(0, ...out.alerts.map((a) => a.iid)));
  } finally {
    if (first.child.exitCode === null && first.child.signalCode === null) await first.stop('SIGKILL');
    if (second) await second.stop();
    await db.close();
  }
}

describe('durability: SIGKILL under load loses nothing answered', () => {
  it('on SQLite', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-durable-'));
    try {
      await runScenario(liveSqlite(dataDir), dataDir);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  const pgUrl = process.env.TEST_DATABASE_URL;
  it('on PostgreSQL', { timeout: 120_000, skip: pgUrl ? false : 'TEST_DATABASE_URL is not set' }, async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-durable-'));
    try {
      await runScenario(await livePostgres(pgUrl as string), dataDir);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
