import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { runGit } from '../helpers/git.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { envelope, envelopePath, hex32, sentryAuth } from '../helpers/sentry.js';
import {
  LIVE_ROOT_PASSWORD,
  LIVE_ROOT_TOKEN,
  codeFlow,
  liveApi,
  livePostgres,
  registerLiveApp,
  signIn,
  type LiveClient,
} from '../helpers/live.js';

/**
 * `basalt backup create|restore` and `basalt db copy` (issue 24) run as processes against real
 * servers: a seeded instance is backed up while it ingests alerts, restored into a fresh
 * directory and served again; a corrupted archive and a non-empty directory are refused; and
 * the same SQLite data copied into PostgreSQL answers the same reads.
 */
const root = path.resolve(import.meta.dirname, '..', '..');
const pgUrl = process.env.TEST_DATABASE_URL;
/** Alerts sent while the backup runs, at most (the loop stops when the backup ends). */
const MAX_CONCURRENT_ALERTS = 1500;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built `basalt` command (startServer has built dist/), never blocking this event loop. */
function basalt(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'dist', 'cli.js'), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function instanceEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    STORAGES: `default=${path.join(dataDir, 'repositories')},second=${path.join(dataDir, 'second-storage')}`,
    RATE_LIMITS: '',
    RUN_JOBS: 'false',
    // startServer finds the port in the info-level 'Server listening' line.
    LOG_LEVEL: 'info',
    ...extra,
  };
}

interface Seeded {
  userId: number;
  userToken: string;
  projectId: number;
  notifyPath: string;
  alertKey: string;
  sentryKey: string;
  client: LiveClient;
  head: string;
  jwks: JSONWebKeySet;
}

/** The same error each time (one fingerprint, hence one 64-bit key), as a new event. */
async function sendError(base: string, projectId: number, sentryKey: string, n: number): Promise<void> {
  const sent = await fetch(`${base}${envelopePath(projectId)}`, {
    method: 'POST',
    headers: { 'x-sentry-auth': sentryAuth(sentryKey) },
    body: envelope({ event_id: hex32(n) }, [
      { type: 'event', payload: { event_id: hex32(n), level: 'error', platform: 'node', message: 'kept error' } },
    ]),
  });
  assert.equal(sent.status, 200, await sent.text());
}

async function seed(base: string, scratch: string): Promise<Seeded> {
  const user = await liveApi(base, 'POST', '/users', LIVE_ROOT_TOKEN, {
    username: 'backed-up',
    email: 'backed-up@example.com',
    name: 'Backed Up',
    password: 'backed-up-password-1',
  });
  assert.equal(user.status, 201, user.text);
  const userId = (user.json() as { id: number }).id;
  const token = await liveApi(base, 'POST', `/users/${userId}/personal_access_tokens`, LIVE_ROOT_TOKEN, {
    name: 'kept',
    scopes: ['api', 'read_user'],
  });
  assert.equal(token.status, 201, token.text);
  const project = await liveApi(base, 'POST', '/projects', LIVE_ROOT_TOKEN, { name: 'kept', path: 'kept' });
  assert.equal(project.status, 201, project.text);
  const projectId = (project.json() as { id: number }).id;
  const integration = await liveApi(base, 'POST', `/projects/${projectId}/alert_management/integrations`, LIVE_ROOT_TOKEN, {
    name: 'monitoring',
    type: 'http',
    active: true,
  });
  assert.equal(integration.status, 201, integration.text);
  const { url, token: alertKey } = integration.json() as { url: string; token: string };
  const settings = await liveApi(base, 'PUT', `/projects/${projectId}/error_tracking/settings`, LIVE_ROOT_TOKEN, {
    active: true,
    integrated: true,
  });
  assert.equal(settings.status, 200, settings.text);
  const keys = (await liveApi(base, 'GET', `/projects/${projectId}/error_tracking/client_keys`, LIVE_ROOT_TOKEN)).json() as {
    public_key: string;
  }[];
  const sentryKey = keys[0]?.public_key ?? '';
  await sendError(base, projectId, sentryKey, 1);
  const client = await registerLiveApp(base, LIVE_ROOT_TOKEN, 'api read_user openid');

  const work = path.join(scratch, 'work');
  mkdirSync(work);
  await runGit(['init', '--quiet', '--initial-branch=main', work]);
  for (let i = 1; i <= 3; i += 1) {
    writeFileSync(path.join(work, 'README.md'), `# kept ${i}\n`);
    await runGit(['add', 'README.md'], { cwd: work });
    await runGit(['commit', '--quiet', '-m', `Commit ${i}`], { cwd: work });
  }
  await runGit(['push', '--quiet', remote(base, 'root/kept'), 'main'], { cwd: work });
  const head = await runGit(['rev-parse', 'HEAD'], { cwd: work });
  const jwks = (await (await fetch(`${base}/oauth/discovery/keys`)).json()) as JSONWebKeySet;
  return {
    userId,
    userToken: (token.json() as { token: string }).token,
    projectId,
    notifyPath: new URL(url).pathname,
    alertKey,
    sentryKey,
    client,
    head,
    jwks,
  };
}

const remote = (base: string, fullPath: string) => `${base.replace('http://', `http://oauth2:${LIVE_ROOT_TOKEN}@`)}/${fullPath}.git`;

async function notify(base: string, s: Seeded, title: string): Promise<{ iid: number }> {
  const res = await fetch(`${base}${s.notifyPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${s.alertKey}` },
    body: JSON.stringify({ title, fingerprint: title, monitoring_tool: 'backup-test' }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const [alert] = JSON.parse(text) as { iid: number }[];
  return alert as { iid: number };
}

async function read(base: string, url: string, token = LIVE_ROOT_TOKEN): Promise<unknown> {
  const res = await liveApi(base, 'GET', url, token);
  assert.equal(res.status, 200, `${url}: ${res.text}`);
  return res.json();
}

/** The fixed list of reads compared between instances that must hold the same data. */
async function answers(base: string, s: Seeded): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const url of [
    `/users/${s.userId}`,
    `/users?per_page=100`,
    `/projects/${s.projectId}`,
    `/projects/${s.projectId}/events?per_page=100`,
    `/projects/${s.projectId}/alert_management/alerts?per_page=20`,
    `/projects/${s.projectId}/alert_management/integrations`,
    `/projects/${s.projectId}/error_tracking/errors`,
    `/applications`,
  ]) {
    out[url] = await read(base, url);
  }
  out['/user (the user token)'] = await read(base, '/user', s.userToken);
  out.jwks = await (await fetch(`${base}/oauth/discovery/keys`)).json();
  return out;
}

/** A copy of a .tar.gz with one byte of a file's content flipped (headers and gzip stay valid). */
function corrupt(archive: string, into: string, entry: string): void {
  const tar = gunzipSync(readFileSync(archive));
  for (let at = 0; at + 512 <= tar.length; at += 512) {
    const name = tar
      .subarray(at, at + 100)
      .toString('utf8')
      .replace(/\0.*$/s, '');
    if (name === entry) {
      const data = at + 512;
      tar[data] = (tar[data] ?? 0) ^ 0x01;
      writeFileSync(into, gzipSync(tar));
      return;
    }
  }
  throw new Error(`${entry} is not in ${archive}`);
}

describe('basalt backup and db copy', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'basalt-backup-'));
  const sourceDir = path.join(scratch, 'source');
  const archive = path.join(scratch, 'instance.tar.gz');
  let source: ServerProcess | null = null;
  let s: Seeded;

  before(async () => {
    source = await startServer(instanceEnv(sourceDir, { BASALT_ROOT_TOKEN: LIVE_ROOT_TOKEN, BASALT_ROOT_PASSWORD: LIVE_ROOT_PASSWORD }));
    s = await seed(source.url, scratch);
    for (let i = 0; i < 5; i += 1) await notify(source.url, s, `before ${i}`);
  });
  after(async () => {
    await source?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('backs up while alerts arrive; the restored instance has the same users, token, keys, data and commits', async () => {
    const base = (source as ServerProcess).url;
    // Alerts arrive all through the backup; those answered before it began must be in it.
    let running = true;
    let sentDuring = 0;
    const answered: number[] = [];
    const ingest = (async () => {
      while (running && sentDuring < MAX_CONCURRENT_ALERTS) {
        sentDuring += 1;
        answered.push((await notify(base, s, `during ${sentDuring}`)).iid);
      }
    })();
    while (answered.length < 10) await new Promise((resolve) => setImmediate(resolve));
    const answeredBefore = [...answered];
    const created = await basalt(['backup', 'create', archive], instanceEnv(sourceDir));
    running = false;
    await ingest;
    assert.equal(created.code, 0, created.stderr);
    assert.ok(answered.length > answeredBefore.length, 'alerts were answered while the backup ran');
    assert.match(created.stdout, /backup written to .*instance\.tar\.gz/);
    assert.match(created.stderr, /database: \d+ tables/);
    assert.deepEqual(
      readdirSync(scratch).filter((name) => name.includes('partial') || name.startsWith('.basalt-backup')),
      [],
      'no temporary file is left',
    );
    const before = await answers(base, s);

    const restoredDir = path.join(scratch, 'restored');
    const restored = await basalt(['backup', 'restore', archive], instanceEnv(restoredDir));
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stderr, /verifying checksums/);

    // No root token or password in the environment: whatever works below came from the archive.
    const server = await startServer(instanceEnv(restoredDir));
    try {
      const after = await answers(server.url, s);
      for (const key of [
        `/users/${s.userId}`,
        '/users?per_page=100',
        `/projects/${s.projectId}`,
        `/projects/${s.projectId}/error_tracking/errors`,
        '/applications',
        '/user (the user token)',
        'jwks',
      ]) {
        assert.deepEqual(after[key], before[key], key);
      }
      const events = after[`/projects/${s.projectId}/events?per_page=100`] as {
        action_name: string;
        push_data?: { commit_title?: string };
      }[];
      assert.ok(
        events.some((e) => e.action_name === 'pushed new' && e.push_data?.commit_title === 'Commit 3'),
        'the push event is kept',
      );
      // Every alert answered before the backup began is there, with its iid.
      for (const iid of [1, 2, 3, 4, 5, ...answeredBefore]) {
        const alert = (await read(server.url, `/projects/${s.projectId}/alert_management/alerts/${iid}`)) as { iid: number };
        assert.equal(alert.iid, iid);
      }
      // The OAuth signing key is the same: an id_token the restored server signs verifies with the source's keys.
      const jar = await signIn(server.url, 'root', LIVE_ROOT_PASSWORD);
      const tokens = (await codeFlow(server.url, jar, s.client, 'openid api')) as { access_token: string; id_token?: string };
      assert.ok(tokens.id_token, 'an id_token is issued');
      const { payload } = await jwtVerify(tokens.id_token, createLocalJWKSet(s.jwks), { audience: s.client.clientId });
      assert.equal(payload.sub, '1');
      // The repository clones with the same commits.
      const clone = path.join(scratch, 'clone');
      await runGit(['clone', '--quiet', remote(server.url, 'root/kept'), clone]);
      assert.equal(await runGit(['rev-parse', 'HEAD'], { cwd: clone }), s.head);
      assert.equal(await runGit(['rev-list', '--count', 'HEAD'], { cwd: clone }), '3');
      // The next alert continues the numbering of the data restored.
      const highest = Math.max(5, ...answered);
      const next = await notify(server.url, s, 'after restore');
      assert.ok(next.iid > 5 && next.iid <= highest + 1, `the next iid (${next.iid}) follows the restored ones`);
    } finally {
      await server.stop();
    }
  });

  it('refuses a corrupted archive with a checksum error, writing nothing', async () => {
    const bad = path.join(scratch, 'corrupted.tar.gz');
    corrupt(archive, bad, 'secrets/secrets.json');
    const target = path.join(scratch, 'from-corrupted');
    const result = await basalt(['backup', 'restore', bad], instanceEnv(target));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^basalt: checksum error: secrets\/secrets\.json does not match its checksum/m);
    // The archive is refused before the configuration is even loaded: DATA_DIR was not created.
    assert.equal(existsSync(target), false);
    const truncated = path.join(scratch, 'truncated.tar.gz');
    writeFileSync(truncated, readFileSync(archive).subarray(0, 2000));
    const cut = await basalt(['backup', 'restore', truncated], instanceEnv(target));
    assert.equal(cut.code, 1);
    assert.match(cut.stderr, /^basalt: checksum error: the archive cannot be read to its end/m);
    assert.equal(existsSync(target), false);
  });

  it('refuses to restore into a data directory that is not empty', async () => {
    const target = path.join(scratch, 'occupied');
    mkdirSync(target);
    writeFileSync(path.join(target, 'basalt.sqlite3'), '');
    const result = await basalt(['backup', 'restore', archive], instanceEnv(target));
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(
      result.stderr,
      /^basalt: DATA_DIR .*occupied is not empty \(basalt\.sqlite3\): restore only into an empty data directory$/m,
    );
  });

  it(
    'db copy moves the SQLite data into an empty PostgreSQL schema that then answers the same',
    { skip: pgUrl ? false : 'TEST_DATABASE_URL is not set' },
    async () => {
      const base = (source as ServerProcess).url;
      const expected = await answers(base, s);
      const maxima = {
        user: Math.max(...((await read(base, '/users?per_page=100')) as { id: number }[]).map((u) => u.id)),
        project: s.projectId,
      };
      await (source as ServerProcess).stop();
      source = null;
      const db = await livePostgres(pgUrl as string);
      try {
        const url = db.env.DATABASE_URL as string;
        const copied = await basalt(['db', 'copy', '--to', url], instanceEnv(sourceDir));
        assert.equal(copied.code, 0, copied.stderr);
        assert.match(copied.stdout, /copied \d+ rows in \d+ tables .* \(row counts verified\)/);
        assert.match(copied.stdout, /now set DATABASE_URL=/);
        // 64-bit values (error fingerprint keys) are copied exactly, not through a double.
        const sqlite = new Database(path.join(sourceDir, 'basalt.sqlite3'), { readonly: true });
        const sqliteKeys = sqlite.prepare('select cast(fingerprint_key as text) as k from error_tracking_errors order by id').all();
        sqlite.close();
        assert.deepEqual(await db.query('select fingerprint_key::text as k from error_tracking_errors order by id'), sqliteKeys);
        const again = await basalt(['db', 'copy', '--to', url], instanceEnv(sourceDir));
        assert.equal(again.code, 1);
        assert.match(again.stderr, /^basalt: the PostgreSQL schema "t_[^"]+" is not empty/m);

        const server = await startServer(instanceEnv(sourceDir, { DATABASE_URL: url }));
        try {
          assert.deepEqual(await answers(server.url, s), expected);
          const user = await liveApi(server.url, 'POST', '/users', LIVE_ROOT_TOKEN, {
            username: 'after-copy',
            email: 'after-copy@example.com',
            name: 'After Copy',
            password: 'after-copy-password-1',
          });
          assert.equal(user.status, 201, user.text);
          assert.ok((user.json() as { id: number }).id > maxima.user);
          const project = await liveApi(server.url, 'POST', '/projects', LIVE_ROOT_TOKEN, { name: 'after', path: 'after' });
          assert.equal(project.status, 201, project.text);
          assert.ok((project.json() as { id: number }).id > maxima.project);
          const alerts = (expected[`/projects/${s.projectId}/alert_management/alerts?per_page=20`] as { iid: number }[]).map((a) => a.iid);
          const next = await notify(server.url, s, 'after copy');
          assert.ok(next.iid > Math.max(...alerts), `a fresh iid (${next.iid})`);
          // The error's 64-bit fingerprint key came across exactly: the same error groups onto it.
          await sendError(server.url, s.projectId, s.sentryKey, 2);
          const errors = (await read(server.url, `/projects/${s.projectId}/error_tracking/errors`)) as { count: number }[];
          assert.deepEqual(
            errors.map((e) => e.count),
            [2],
          );

          // A backup of the PostgreSQL instance while it runs (one REPEATABLE READ export) restores into SQLite.
          const pgAnswers = await answers(server.url, s);
          const pgArchive = path.join(scratch, 'postgres.tar.gz');
          const created = await basalt(['backup', 'create', pgArchive], instanceEnv(sourceDir, { DATABASE_URL: url }));
          assert.equal(created.code, 0, created.stderr);
          assert.match(created.stderr, /one REPEATABLE READ snapshot/);
          const sqliteDir = path.join(scratch, 'from-postgres');
          const restored = await basalt(['backup', 'restore', pgArchive], instanceEnv(sqliteDir));
          assert.equal(restored.code, 0, restored.stderr);
          assert.match(restored.stderr, /restoring postgres data into sqlite/);
          await server.stop();
          const onSqlite = await startServer(instanceEnv(sqliteDir));
          try {
            assert.deepEqual(await answers(onSqlite.url, s), pgAnswers);
          } finally {
            await onSqlite.stop();
          }
        } finally {
          await server.stop();
        }
        // The SQLite archive of the first test restores into PostgreSQL as well (the copier, counts verified).
        const other = await livePostgres(pgUrl as string);
        try {
          const restored = await basalt(['backup', 'restore', archive], instanceEnv(path.join(scratch, 'sqlite-to-postgres'), other.env));
          assert.equal(restored.code, 0, restored.stderr);
          assert.match(restored.stderr, /restoring sqlite data into postgres/);
          assert.match(restored.stderr, /rows restored and counted/);
          const [row] = await other.query<{ n: string }>('select count(*)::text as n from users where username = ?', ['backed-up']);
          assert.equal(row?.n, '1');
        } finally {
          await other.close();
        }
      } finally {
        await db.close();
      }
    },
  );
});
