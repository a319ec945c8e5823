import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ROOT_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { createGitTestApp, type GitTestApp } from '../helpers/git.js';
import { issueTokens, registerApp, sessionCookie } from '../helpers/oauth.js';

/**
 * Debian's python3-gitlab (3.12) against a listening server (issue 19): the library through the
 * scenarios in fixtures/python_gitlab_scenarios.py, and its `python3 -m gitlab` CLI.
 */
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(import.meta.dirname, 'fixtures', 'python_gitlab_scenarios.py');
const probe = spawnSync(PYTHON, ['-c', 'import gitlab; print(gitlab.__version__)'], { encoding: 'utf8' });
const skip = probe.status === 0 ? false : `${PYTHON} cannot import gitlab (Debian package python3-gitlab is not installed)`;
const run = promisify(execFile);
const DEVELOPER = 30;

/** A free loopback port, so that EXTERNAL_URL (which the Link headers use) is the server's address. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

const listen = async (t: TestApp) => {
  await t.app.listen({ host: '127.0.0.1', port: new URL(t.config.externalUrl).port ? Number(new URL(t.config.externalUrl).port) : 0 });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
};

describe('python-gitlab (library and CLI) against a listening server', { skip }, () => {
  let t: GitTestApp;
  let limited: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let context: Record<string, unknown>;
  let scratch: string;

  /** Runs scenarios in one Python process; each result is what the client returned. */
  const scenarios = async (...names: string[]): Promise<Record<string, Record<string, unknown>>> => {
    const { stdout } = await run(PYTHON, [SCRIPT, ...names], {
      env: { ...process.env, BASALT_CONTEXT: JSON.stringify(context) },
      timeout: 120_000,
    });
    const results = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
    for (const name of names) assert.equal(results[name]?.unexpected, undefined, `${name}: ${String(results[name]?.unexpected)}`);
    return results;
  };

  before(async () => {
    t = await createGitTestApp({ manualClock: false, env: { EXTERNAL_URL: `http://127.0.0.1:${await freePort()}` } });
    limited = await createTestApp({ manualClock: false, env: { RATE_LIMITS: 'api_authenticated=2/m' } });
    alice = await createUser(t.app, { username: 'py-alice' });
    bob = await createUser(t.app, { username: 'py-bob' });
    const group = await createGroup(t.app, alice, { path: 'py-group', visibility: 'public' });
    const project = await createProject(t.app, alice, { path: 'app', namespaceId: group.id, visibility: 'public' });
    const secret = await createProject(t.app, alice, { path: 'secret' });
    for (let i = 0; i < 3; i += 1) await createProject(t.app, alice, { path: `own-${i}` });
    await createProject(t.app, bob, { path: 'bobs', visibility: 'public' });
    await addMember(t.app, 'project', project.id, bob, DEVELOPER);
    const seeded = await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'Seeded' } });
    assert.equal(seeded.statusCode, 201);
    const job = await t.api('POST', `/projects/${project.id}/jobs`, { token: alice.token, body: { name: 'build', ref: 'main' } });
    assert.equal(job.statusCode, 201, job.body);
    const client = await registerApp(t, { scopes: 'api read_user' });
    const oauth = await issueTokens(t, await sessionCookie(t, alice), client, { scope: 'api' });
    scratch = mkdtempSync(path.join(os.tmpdir(), 'basalt-python-gitlab-'));
    context = {
      url: await listen(t),
      limited_url: await listen(limited),
      limited_token: ROOT_TOKEN,
      root_token: ROOT_TOKEN,
      alice_token: alice.token,
      alice_username: alice.user.username,
      alice_id: alice.user.id,
      bob_token: bob.token,
      bob_username: bob.user.username,
      bob_id: bob.user.id,
      oauth_token: oauth.access_token,
      job_token: job.json<{ token: string }>().token,
      group_path: 'py-group',
      project_path: 'py-group/app',
      project_id: project.id,
      private_project_path: secret.full_path,
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
    };
  });
  after(async () => {
    await limited?.close();
    await t?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('authenticates with a private token, an OAuth token and a job token', async () => {
    const r = await scenarios('auth_private', 'auth_oauth', 'auth_job');
    assert.deepEqual(r.auth_private, { username: 'py-alice', id: alice.user.id });
    assert.deepEqual(r.auth_oauth, { username: 'py-alice' });
    assert.equal(r.auth_job?.status, 'running');
    assert.equal(r.auth_job?.project, 'py-group/app');
  });

  it('reads users, groups and projects by path', async () => {
    const r = await scenarios('users', 'by_path');
    assert.deepEqual(r.users, { by_name: ['py-bob'], active_has_bob: true, bob: 'py-bob' });
    assert.deepEqual(r.by_path, { group: 'py-group', project: 'py-group/app', group_projects: ['py-group/app'] });
  });

  it('list filters given as Python booleans are applied: owned lists only the caller’s', async () => {
    const r = await scenarios('list_filters');
    const filters = r.list_filters as Record<string, string[]>;
    const mine = ['py-alice/own-0', 'py-alice/own-1', 'py-alice/own-2', 'py-alice/secret', 'py-group/app'];
    assert.deepEqual(filters.owned, mine);
    assert.deepEqual(filters.membership, mine);
    assert.ok(filters.all?.includes('py-bob/bobs'), 'without the filter, public projects of others are listed');
    assert.deepEqual(filters.groups_owned, ['py-group']);
  });

  it('follows pages with iterator=True and get_all=True', async () => {
    const r = await scenarios('pagination');
    assert.deepEqual(r.pagination, { walked: 5, distinct: 5, total: 5, get_all: 5, first_page: 2 });
  });

  it('acts as another user with sudo', async () => {
    const r = await scenarios('sudo');
    assert.deepEqual(r.sudo, { user: 'py-alice', project: 'py-alice/made-with-sudo' });
  });

  it('creates and lists personal, project and group access tokens (scopes as arrays)', async () => {
    const r = await scenarios('token_kinds');
    const tokens = r.token_kinds as Record<string, unknown>;
    assert.equal(tokens.listed, true);
    assert.deepEqual(tokens.personal_scopes, ['read_api', 'read_user']);
    assert.equal(tokens.personal_token_works, true);
    assert.deepEqual(tokens.project_token_scopes, ['read_api']);
    assert.equal(tokens.project_token_reads, 'py-group/app');
    assert.deepEqual(tokens.group_token_scopes, ['read_api']);
    assert.deepEqual(tokens.project_tokens, ['bot']);
  });

  it('edits notification settings with save()', async () => {
    const r = await scenarios('notification_settings');
    assert.deepEqual(r.notification_settings, { global: 'watch', project: 'custom', events: { new_note: true, close_issue: false } });
  });

  it('creates, closes and lists issues and notes, then reads the events they made', async () => {
    const r = await scenarios('issues_and_notes', 'events');
    const issue = r.issues_and_notes as Record<string, unknown>;
    assert.equal(issue.state, 'closed');
    assert.deepEqual(issue.closed, ['From python-gitlab']);
    assert.deepEqual(issue.notes, ['a note']);
    const events = r.events as Record<string, unknown>;
    assert.ok(Number(events.mine) >= 3, JSON.stringify(events));
    assert.deepEqual(events.issue_actions, ['closed', 'opened']);
    assert.ok(Number(events.user_events) >= 3);
  });

  it('schedules and lists storage moves through http_post, http_list and http_get', async () => {
    const r = await scenarios('storage_moves');
    const moves = r.storage_moves as Record<string, unknown>;
    assert.equal(moves.destination, 'second');
    assert.equal(moves.listed, true);
    assert.equal((moves.for_project as unknown[]).length, 1);
    assert.equal(moves.one, true);
  });

  it('raises the exception classes of python-gitlab for 400, 401, 403, 404 and 409', async () => {
    const r = await scenarios('exceptions');
    const errors = r.exceptions as Record<string, { class: string; code: number; message: string }>;
    assert.deepEqual(errors['400'], {
      class: 'GitlabCreateError',
      code: 400,
      message: 'name, path are missing, at least one parameter must be provided',
    });
    assert.equal(errors['401']?.class, 'GitlabAuthenticationError');
    assert.equal(errors['401']?.code, 401);
    assert.deepEqual([errors['403']?.class, errors['403']?.code], ['GitlabCreateError', 403]);
    assert.deepEqual([errors['404']?.class, errors['404']?.code], ['GitlabGetError', 404]);
    assert.equal(errors['404']?.message, '404 Project Not Found');
    assert.deepEqual([errors['404_private']?.class, errors['404_private']?.code], ['GitlabGetError', 404]);
    assert.deepEqual([errors['409']?.class, errors['409']?.code], ['GitlabCreateError', 409]);
  });

  it('raises on 429 when told not to wait', async () => {
    const r = await scenarios('rate_limited');
    const limitedResult = r.rate_limited as Record<string, { class: string | null; code?: number }>;
    assert.equal(limitedResult.first?.class, null);
    assert.deepEqual([limitedResult.last?.class, limitedResult.last?.code], ['GitlabHttpError', 429]);
    assert.deepEqual([limitedResult.get?.class, limitedResult.get?.code], ['GitlabGetError', 429]);
  });

  it('the `python3 -m gitlab` CLI with a configuration file', async () => {
    const config = path.join(scratch, 'python-gitlab.cfg');
    writeFileSync(
      config,
      `[global]\ndefault = basalt\n\n[basalt]\nurl = ${String(context.url)}\nprivate_token = ${alice.token}\napi_version = 4\n`,
      {
        mode: 0o600,
      },
    );
    const cli = async (...args: string[]) => {
      const { stdout } = await run(PYTHON, ['-m', 'gitlab', '-c', config, '-o', 'json', ...args], { timeout: 60_000 });
      return JSON.parse(stdout) as unknown;
    };
    assert.equal(((await cli('current-user', 'get')) as { username: string }).username, 'py-alice');
    const project = (await cli('project', 'get', '--id', 'py-group/app')) as { path_with_namespace: string };
    assert.equal(project.path_with_namespace, 'py-group/app');
    const owned = (await cli('project', 'list', '--owned', 'true', '--get-all')) as { path_with_namespace: string }[];
    assert.ok(owned.length >= 5);
    assert.ok(owned.every((p) => p.path_with_namespace.startsWith('py-alice/') || p.path_with_namespace.startsWith('py-group/')));
  });
});
