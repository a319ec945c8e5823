// Not in the PostgreSQL tier: git over HTTP; what it stores is covered by the storage-move suite.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { basicAuth, createGitTestApp, gitTestEnv, makeWorkTree, pkt, runGit, ZERO_OID, type GitTestApp } from '../helpers/git.js';
import { waitUntil, within } from '../helpers/wait.js';
import type { ProjectRow } from '../../src/modules/projects/index.js';

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

/** Pids of this user's processes whose environment has `REMOTE_ADDR=<address>` (git started for that client). */
function gitProcessesFor(address: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(`REMOTE_ADDR=${address}`)) pids.push(Number(entry));
    } catch {
      // Gone, or not ours.
    }
  }
  return pids;
}

describe('git smart HTTP limits (issue 18)', () => {
  let t: GitTestApp;
  let owner: TestUser;
  let project: ProjectRow;
  let head: string;
  let port: number;
  let home: string;
  const uploadPack = (payload: Buffer | PassThrough, remoteAddress = '127.0.0.1', headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: `/${project.full_path}.git/git-upload-pack`,
      remoteAddress,
      headers: { 'content-type': 'application/x-git-upload-pack-request', authorization: basicAuth('x', owner.token), ...headers },
      payload,
    });
  const refs = (remoteAddress: string) =>
    t.app.inject({
      method: 'GET',
      url: `/${project.full_path}.git/info/refs?service=git-upload-pack`,
      remoteAddress,
      headers: { authorization: basicAuth('x', owner.token) },
    });
  const fetchRequest = () => Buffer.concat([pkt(`want ${head}\n`), Buffer.from('0000'), pkt('done\n')]);

  before(async () => {
    t = await createGitTestApp({
      env: {
        GIT_MAX_CONCURRENCY_PER_IP: '1',
        GIT_MAX_CONCURRENCY: '2',
        GIT_MAX_PUSH_SIZE: String(1024 * 1024),
        GIT_MAX_UPLOAD_PACK_SIZE: '4096',
        GIT_TIMEOUT_SECONDS: '3',
      },
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
    home = path.join(t.scratch, 'home');
    mkdirSync(home);
    owner = await createUser(t.app, { scopes: ['read_repository', 'write_repository'] });
    project = await createProject(t.app, owner, { path: 'limited', visibility: 'private' });
    await t.app.platform.jobs.drain();
    const work = path.join(t.scratch, 'seed');
    head = await makeWorkTree(work, 2);
    const repo = t.app.modules.git.storages.path(project.repository_storage, 'project', project.id);
    await runGit(['push', '--quiet', repo, 'main:main'], { cwd: work });
  });
  after(() => t.close());

  it('a chunked push over GIT_MAX_PUSH_SIZE is refused with a message git prints; the server goes on', async () => {
    const work = path.join(t.scratch, 'big-push');
    const url = `http://oauth2:${owner.token}@127.0.0.1:${port}/${project.full_path}.git`;
    const cloned = await gitClient(['clone', '--quiet', url, work], t.scratch, home);
    assert.equal(cloned.code, 0, cloned.output);
    // 3 MiB of noise: over http.postBuffer (1 MiB), so git sends it chunked, and over the limit.
    writeFileSync(path.join(work, 'noise.bin'), randomBytes(3 * 1024 * 1024));
    await runGit(['add', 'noise.bin'], { cwd: work });
    await runGit(['commit', '--quiet', '-m', 'Too big'], { cwd: work });
    const pushed = await gitClient(['push', 'origin', 'HEAD:refs/heads/big'], work, home);
    assert.notEqual(pushed.code, 0, pushed.output);
    assert.match(pushed.output, /remote: Push too large: the limit is 1048576 bytes \(GIT_MAX_PUSH_SIZE\)\./);
    assert.match(pushed.output, /\[remote rejected\] HEAD -> big \(Push too large/);
    const repo = t.app.modules.git.storages.path(project.repository_storage, 'project', project.id);
    assert.equal(await runGit(['rev-parse', '--verify', '--quiet', 'refs/heads/big'], { cwd: repo }).catch(() => ''), '');
    // receive-pack was stopped with SIGTERM, so it removed the objects it had quarantined.
    await waitUntil(() => !readdirSync(path.join(repo, 'objects')).some((name) => name.startsWith('incoming-')), 'the quarantine to go');
    await waitUntil(
      async () => (await t.app.platform.db.selectFrom('git_active_pushes').selectAll().execute()).length === 0,
      'the push to end',
    );
    const listed = await gitClient(['ls-remote', url], t.scratch, home);
    assert.equal(listed.code, 0, listed.output);
    // A push within the limit still goes through.
    await runGit(['reset', '--quiet', '--hard', 'HEAD~1'], { cwd: work });
    await runGit(['commit', '--quiet', '--allow-empty', '-m', 'Small'], { cwd: work });
    const small = await gitClient(['push', 'origin', 'HEAD:refs/heads/small'], work, home);
    assert.equal(small.code, 0, small.output);
  });

  it('a push over the limit that is not a git client (no ref command) is 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/${project.full_path}.git/git-receive-pack`,
      remoteAddress: '10.5.0.1',
      headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('x', owner.token) },
      payload: Buffer.concat([Buffer.from('0000'), Buffer.alloc(1024 * 1024 + 10, 1)]),
    });
    assert.equal(res.statusCode, 413);
    assert.match(res.body, /Push too large/);
  });

  it('git-upload-pack bodies have their own, smaller limit (GIT_MAX_UPLOAD_PACK_SIZE)', async () => {
    // Each test has its own addresses: a refused request's process may still be ending (cap 1).
    const ok = await uploadPack(fetchRequest(), '10.3.0.1');
    assert.equal(ok.statusCode, 200);
    assert.ok(ok.rawPayload.includes(Buffer.from('PACK')));
    const haves = Array.from({ length: 100 }, (_, i) => pkt(`have ${i.toString(16).padStart(40, '0')}\n`));
    const big = await uploadPack(Buffer.concat([pkt(`want ${head}\n`), Buffer.from('0000'), ...haves, pkt('done\n')]), '10.3.0.2');
    assert.equal(big.statusCode, 413);
    assert.equal(big.body, 'Fetch request too large: the limit is 4096 bytes.\n');
  });

  it('a gzip-encoded body that does not inflate is 400, for upload-pack and receive-pack', async () => {
    const broken = Buffer.concat([gzipSync(fetchRequest()).subarray(0, 12), Buffer.from('not gzip at all')]);
    const fetched = await uploadPack(broken, '10.4.0.1', { 'content-encoding': 'gzip' });
    assert.equal(fetched.statusCode, 400);
    assert.equal(fetched.body, 'The request body is not valid gzip.\n');
    const pushed = await t.app.inject({
      method: 'POST',
      url: `/${project.full_path}.git/git-receive-pack`,
      remoteAddress: '10.4.0.2',
      headers: {
        'content-type': 'application/x-git-receive-pack-request',
        'content-encoding': 'gzip',
        authorization: basicAuth('x', owner.token),
      },
      payload: Buffer.from('plainly not gzip'),
    });
    assert.equal(pushed.statusCode, 400);
    assert.equal(pushed.body, 'The request body is not valid gzip.\n');
    await waitUntil(async () => (await uploadPack(fetchRequest(), '10.4.0.1')).statusCode === 200, 'the slot to be given back');
  });

  it('caps git http-backend processes per client address and in all with 429 and Retry-After', async () => {
    const first = new PassThrough();
    first.write(pkt(`want ${head}\n`));
    const held = uploadPack(first, '10.1.0.1');
    // The first request holds the only slot of 10.1.0.1 while its body is still coming.
    await waitUntil(() => gitProcessesFor('10.1.0.1').length > 0, 'the first request to hold its slot');
    const refused = await refs('10.1.0.1');
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '5');
    assert.equal(refused.headers['ratelimit-name'], 'git_concurrency_per_ip');
    assert.match(refused.body, /Too many git operations in progress from your address \(at most 1 at once\)/);
    assert.equal((await refs('10.1.0.2')).statusCode, 200, 'another address has its own slot');
    const second = new PassThrough();
    second.write(pkt(`want ${head}\n`));
    const heldToo = uploadPack(second, '10.1.0.2');
    await waitUntil(() => gitProcessesFor('10.1.0.2').length > 0, 'the second request to hold its slot');
    const full = await refs('10.1.0.3');
    assert.equal(full.statusCode, 429);
    assert.equal(full.headers['ratelimit-name'], 'git_concurrency');
    assert.match(full.body, /Too many git operations in progress on this server/);
    first.end(Buffer.concat([Buffer.from('0000'), pkt('done\n')]));
    second.end(Buffer.concat([Buffer.from('0000'), pkt('done\n')]));
    assert.equal((await held).statusCode, 200);
    assert.equal((await heldToo).statusCode, 200);
    await waitUntil(async () => (await refs('10.1.0.1')).statusCode === 200, 'the slots to be given back');
    assert.equal((await refs('10.1.0.3')).statusCode, 200);
  });

  it('a process past GIT_TIMEOUT_SECONDS is killed with its children and its slot given back', async () => {
    const address = `10.2.${process.pid % 250}.${Math.floor(Math.random() * 250)}`;
    const stalled = new PassThrough();
    // A push whose pack never comes: http-backend, receive-pack and its unpacker wait on it.
    stalled.write(
      Buffer.concat([pkt(`${ZERO_OID} ${head} refs/heads/stalled\0report-status\n`), Buffer.from('0000'), Buffer.from('PACK')]),
    );
    const started = Date.now();
    const pending = t.app.inject({
      method: 'POST',
      url: `/${project.full_path}.git/git-receive-pack`,
      remoteAddress: address,
      headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('x', owner.token) },
      payload: stalled,
    });
    await waitUntil(() => gitProcessesFor(address).length >= 2, 'http-backend and receive-pack to run');
    const res = await within(pending, 10_000);
    assert.ok(res, 'answered within the time limit');
    assert.equal(res.statusCode, 503);
    assert.equal(res.body, 'The git operation took longer than 3 seconds and was stopped.\n');
    assert.ok(Date.now() - started >= 2900);
    await waitUntil(() => gitProcessesFor(address).length === 0, 'every process of the group to be gone', { attempts: 150 });
    assert.equal((await refs(address)).statusCode, 200, 'its slot was given back');
    stalled.destroy();
    const repo = t.app.modules.git.storages.path(project.repository_storage, 'project', project.id);
    assert.ok(existsSync(repo));
  });
});
