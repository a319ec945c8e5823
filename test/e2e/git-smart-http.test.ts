import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { ROOT_TOKEN } from '../helpers/app.js';
import { createGitTestApp, gitTestEnv, runGit, type GitTestApp } from '../helpers/git.js';
import { issueTokens, registerApp, sessionCookie } from '../helpers/oauth.js';
import type { ProjectRow } from '../../src/modules/projects/index.js';

const root = path.resolve(import.meta.dirname, '..', '..');

/** Runs the real git client; resolves with its exit code and output (never throws). */
function gitClient(args: string[], cwd: string, home: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd, env: gitTestEnv({ HOME: home }) });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

function rawGet(port: number, rawPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: rawPath }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

describe('git over HTTP with the real git client', () => {
  let t: GitTestApp;
  let port: number;
  let owner: TestUser;
  let project: ProjectRow;
  let home: string;
  const url = (credentials: string, fullPath = project.full_path) => `http://${credentials}@127.0.0.1:${port}/${fullPath}.git`;

  before(async () => {
    t = await createGitTestApp({ manualClock: true });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    home = path.join(t.scratch, 'home');
    mkdirSync(home);
    owner = await createUser(t.app, { scopes: ['read_repository', 'write_repository'] });
    const group = await createGroup(t.app, owner, { path: 'team' });
    project = await createProject(t.app, owner, { path: 'app', namespaceId: group.id, visibility: 'private' });
    await t.app.platform.jobs.drain();
  });
  after(() => t.close());

  it('clones with a personal token, pushes a commit, and the push shows up as an event', async () => {
    const work = path.join(t.scratch, 'pat-clone');
    const cloned = await gitClient(['clone', url(`oauth2:${owner.token}`), work], t.scratch, home);
    assert.equal(cloned.code, 0, cloned.output);
    assert.match(cloned.output, /empty repository/);
    writeFileSync(path.join(work, 'README.md'), '# app\n');
    await runGit(['add', 'README.md'], { cwd: work });
    await runGit(['commit', '--quiet', '-m', 'Add the readme'], { cwd: work });
    const pushed = await gitClient(['push', 'origin', 'HEAD:main'], work, home);
    assert.equal(pushed.code, 0, pushed.output);
    const events = await t.api('GET', `/projects/${project.id}/events?action=pushed`);
    assert.equal(events.statusCode, 200);
    const push = events.json()[0];
    assert.equal(push.action_name, 'pushed new');
    assert.equal(push.push_data.ref, 'main');
    assert.equal(push.push_data.commit_title, 'Add the readme');
    assert.equal(push.push_data.commit_count, 1);
    assert.equal(push.author_id, owner.user.id);
  });

  it('a private project without credentials: git is asked for them and fails without a prompt', async () => {
    const res = await gitClient(
      ['clone', `http://127.0.0.1:${port}/${project.full_path}.git`, path.join(t.scratch, 'anon')],
      t.scratch,
      home,
    );
    assert.notEqual(res.code, 0);
    assert.match(res.output, /could not read Username|Authentication failed/);
  });

  it('clones with an OAuth access token holding read_repository', async () => {
    const reader = await createUser(t.app);
    await addMember(t.app, 'project', project.id, reader, 20);
    const client = await registerApp(t, { scopes: 'read_repository' });
    const tokens = await issueTokens(t, await sessionCookie(t, reader), client, { scope: 'read_repository' });
    const work = path.join(t.scratch, 'oauth-clone');
    const cloned = await gitClient(['clone', url(`oauth2:${tokens.access_token}`), work], t.scratch, home);
    assert.equal(cloned.code, 0, cloned.output);
    assert.equal(await runGit(['log', '-1', '--format=%s'], { cwd: work }), 'Add the readme');
    const push = await gitClient(['push', 'origin', 'HEAD:refs/heads/nope'], work, home);
    assert.notEqual(push.code, 0, 'a read-only token cannot push');
  });

  it('refuses dot segments in the raw path', async () => {
    assert.equal(await rawGet(port, `/team/../${project.full_path}.git/info/refs?service=git-upload-pack`), 404);
    assert.equal(await rawGet(port, `/team/%2e%2e/team/app.git/info/refs?service=git-upload-pack`), 404);
  });

  it('a push during a move is refused; after the move the project is on the new storage and clones', async () => {
    const work = path.join(t.scratch, 'pat-clone');
    const scheduled = await t.api('POST', `/projects/${project.id}/repository_storage_moves`, {
      body: { destination_storage_name: 'second' },
    });
    assert.equal(scheduled.statusCode, 201);
    await runGit(['commit', '--quiet', '--allow-empty', '-m', 'During the move'], { cwd: work });
    const refused = await gitClient(['push', 'origin', 'HEAD:main'], work, home);
    assert.notEqual(refused.code, 0);
    assert.match(refused.output, /The repository is temporarily read-only\. Please try again later\./);
    const readDuring = await gitClient(['ls-remote', url(`oauth2:${owner.token}`)], t.scratch, home);
    assert.equal(readDuring.code, 0, readDuring.output);

    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/project_repository_storage_moves/${scheduled.json().id}`)).json().state, 'finished');
    const listed = await t.api('GET', '/projects?repository_storage=second');
    assert.ok(listed.json().some((p: { id: number }) => p.id === project.id));
    const again = path.join(t.scratch, 'after-move');
    const cloned = await gitClient(['clone', url(`oauth2:${owner.token}`), again], t.scratch, home);
    assert.equal(cloned.code, 0, cloned.output);
    assert.equal(await runGit(['log', '-1', '--format=%s'], { cwd: again }), 'Add the readme');
    const pushed = await gitClient(['push', 'origin', 'HEAD:main'], work, home);
    assert.equal(pushed.code, 0, pushed.output);
  });

  it('a move whose worker process is killed mid-copy finishes after restart, losing nothing', async () => {
    // A git that stalls in `clone` (the copy step), so the worker can be killed right there.
    const fakeBin = path.join(t.scratch, 'fakebin');
    const marker = path.join(t.scratch, 'copy-started');
    mkdirSync(fakeBin);
    writeFileSync(
      path.join(fakeBin, 'git'),
      `#!/bin/sh\nif [ "$1" = "clone" ]; then touch '${marker}'; sleep 120; fi\nexec /usr/bin/git "$@"\n`,
    );
    chmodSync(path.join(fakeBin, 'git'), 0o755);
    const source = t.app.modules.git.storages.path('second', 'project', project.id);
    const before = await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: source });
    const scheduled = await t.api('POST', `/projects/${project.id}/repository_storage_moves`, {
      body: { destination_storage_name: 'default' },
    });
    assert.equal(scheduled.statusCode, 201);

    const worker = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'test/e2e/fixtures/git-move-worker.ts')], {
      cwd: root,
      detached: true,
      env: {
        ...process.env,
        PATH: `${fakeBin}:${process.env.PATH ?? ''}`,
        BASALT_WORKER_SETUP: JSON.stringify({
          dataDir: t.config.dataDir,
          sqliteFile: t.config.sqliteFile,
          storages: `default=${t.storageDirs.default},second=${t.storageDirs.second}`,
        }),
      },
      stdio: 'ignore',
    });
    for (let i = 0; i < 300 && !existsSync(marker); i += 1) await sleep(100);
    assert.ok(existsSync(marker), 'the worker reached the copy step');
    process.kill(-(worker.pid as number), 'SIGKILL');
    await new Promise((resolve) => worker.once('exit', resolve));

    const mid = (await t.api('GET', `/project_repository_storage_moves/${scheduled.json().id}`)).json();
    assert.equal(mid.state, 'started');
    assert.equal(await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: source }), before);

    // The dead worker's lease runs out; this process picks the job up and resumes the move.
    t.manual?.advance(Date.now() - t.clock.now() + 61_000);
    await t.app.platform.jobs.drain();
    const done = (await t.api('GET', `/project_repository_storage_moves/${scheduled.json().id}`)).json();
    assert.equal(done.state, 'finished', JSON.stringify(done));
    const moved = await t.app.modules.projects.projects.findById(project.id);
    assert.equal(moved?.repository_storage, 'default');
    assert.equal(moved?.repository_read_only, 0);
    const destination = t.app.modules.git.storages.path('default', 'project', project.id);
    assert.equal(await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: destination }), before);
    assert.ok(!existsSync(source));
    const cloned = await gitClient(['clone', url(`oauth2:${owner.token}`), path.join(t.scratch, 'after-kill')], t.scratch, home);
    assert.equal(cloned.code, 0, cloned.output);
  });

  it('a push that loses the race with a move (begun after info/refs) shows the read-only message', async () => {
    const work = path.join(t.scratch, 'after-kill');
    await runGit(['commit', '--quiet', '--allow-empty', '-m', 'Raced by a move'], { cwd: work });
    // git runs pre-push after info/refs and before the POST: the hook schedules a move there.
    const request = JSON.stringify({ destination_storage_name: 'second' });
    const api = `http://127.0.0.1:${port}/api/v4/projects/${project.id}/repository_storage_moves`;
    const script = `fetch(${JSON.stringify(api)}, { method: 'POST', headers: { 'private-token': ${JSON.stringify(ROOT_TOKEN)}, 'content-type': 'application/json' }, body: ${JSON.stringify(request)} }).then((r) => process.exit(r.status === 201 ? 0 : 1))`;
    const hook = path.join(work, '.git', 'hooks', 'pre-push');
    writeFileSync(hook, `#!/bin/sh\nexec '${process.execPath}' -e '${script.replace(/'/g, `'\\''`)}'\n`);
    chmodSync(hook, 0o755);
    const refused = await gitClient(['push', 'origin', 'HEAD:main'], work, home);
    rmSync(hook);
    assert.notEqual(refused.code, 0, refused.output);
    assert.match(refused.output, /remote: The repository is temporarily read-only\. Please try again later\./);
    assert.match(refused.output, /\[remote rejected\] HEAD -> main \(The repository is temporarily read-only/);
    const moves = await t.api('GET', `/projects/${project.id}/repository_storage_moves`);
    assert.equal(moves.json()[0].state, 'scheduled', 'the hook scheduled the move');
    await t.app.platform.jobs.drain();
    const pushed = await gitClient(['push', 'origin', 'HEAD:main'], work, home);
    assert.equal(pushed.code, 0, pushed.output);
  });
});
