// Not in the PostgreSQL tier: git over HTTP; what it stores is covered by the storage-move suite.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { basicAuth, createGitTestApp, makeWorkTree, pkt, receivePackBody, runGit, ZERO_OID, type GitTestApp } from '../helpers/git.js';
import { waitUntil } from '../helpers/wait.js';
import type { DomainEvent, PushedRef } from '../../src/infra/bus.js';
import type { ProjectRow } from '../../src/modules/projects/index.js';

const refs = (fullPath: string, service = 'git-upload-pack') => `/${fullPath}.git/info/refs?service=${service}`;

describe('git smart HTTP', () => {
  let t: GitTestApp;
  let owner: TestUser;
  let publicProject: ProjectRow;
  let privateProject: ProjectRow;
  const pushes: DomainEvent[] = [];

  const get = (url: string, authorization?: string) =>
    t.app.inject({ method: 'GET', url, headers: authorization ? { authorization } : {} });
  const repoDir = (project: ProjectRow, kind: 'project' | 'wiki' = 'project') =>
    t.app.modules.git.storages.path(project.repository_storage, kind, project.id);

  before(async () => {
    t = await createGitTestApp();
    t.app.platform.bus.subscribe(['push_received'], async (event) => {
      pushes.push(event);
    });
    owner = await createUser(t.app, { scopes: ['api'] });
    const group = await createGroup(t.app, owner, { path: 'acme', visibility: 'public' });
    publicProject = await createProject(t.app, owner, { path: 'open', namespaceId: group.id, visibility: 'public' });
    privateProject = await createProject(t.app, owner, { path: 'secret', namespaceId: group.id, visibility: 'private' });
    await t.app.platform.jobs.drain();
  });
  after(() => t.close());

  it('gives every project a bare repository and a wiki under a hashed path of its storage', async () => {
    const dir = repoDir(publicProject);
    assert.match(path.relative(t.storageDirs.default, dir), /^@hashed\/[0-9a-f]{2}\/[0-9a-f]{2}\/[0-9a-f]{64}\.git$/);
    assert.equal(await runGit(['rev-parse', '--is-bare-repository'], { cwd: dir }), 'true');
    assert.ok(existsSync(repoDir(publicProject, 'wiki')));
    assert.ok(dir.endsWith(`${createHash('sha256').update(String(publicProject.id)).digest('hex')}.git`));
  });

  it('gives a snippet a repository holding its file, and a group a wiki repository', async () => {
    const snippet = await t.api('POST', `/projects/${publicProject.id}/snippets`, {
      token: owner.token,
      body: { title: 'Hello snippet', file_name: 'hello.txt', content: 'hello world\n', visibility: 'public' },
    });
    assert.equal(snippet.statusCode, 201);
    const group = await createGroup(t.app, owner, { path: 'wikigroup' });
    await t.app.platform.jobs.drain();
    const snippetRepo = t.app.modules.git.storages.path('default', 'snippet', snippet.json().id);
    assert.equal(await runGit(['show', 'main:hello.txt'], { cwd: snippetRepo }), 'hello world');
    assert.equal(await runGit(['log', '-1', '--format=%s', 'main'], { cwd: snippetRepo }), 'Hello snippet');
    assert.ok(existsSync(t.app.modules.git.storages.path('default', 'group_wiki', group.id)));
    const advertised = await get(`/acme/open/snippets/${snippet.json().id}.git/info/refs?service=git-upload-pack`);
    assert.equal(advertised.statusCode, 200);
    assert.match(advertised.body, /refs\/heads\/main/);
  });

  it('advertises refs of a public project to anyone, with the smart HTTP content type', async () => {
    const res = await get(refs('acme/open'));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/x-git-upload-pack-advertisement');
    assert.match(res.body, /^001e# service=git-upload-pack\n0000/);
    assert.match(String(res.headers['cache-control']), /no-cache/);
  });

  it('answers anonymous callers 401 with WWW-Authenticate for private and unknown repositories alike', async () => {
    for (const url of [refs('acme/secret'), refs('acme/nothing-here'), refs('acme/open', 'git-receive-pack')]) {
      const res = await get(url);
      assert.equal(res.statusCode, 401, url);
      assert.equal(res.headers['www-authenticate'], 'Basic realm="Basalt"');
      assert.match(String(res.headers['content-type']), /^text\/plain/);
      assert.match(res.body, /HTTP Basic: Access denied/);
    }
  });

  it('answers signed-in callers 404 for what they cannot see and 403 for what they may not do', async () => {
    const stranger = await createUser(t.app, { scopes: ['read_repository'] });
    assert.equal((await get(refs('acme/secret'), basicAuth('x', stranger.token))).statusCode, 404);
    assert.equal((await get(refs('acme/nothing-here'), basicAuth('x', stranger.token))).statusCode, 404);
    const guest = await createUser(t.app, { scopes: ['api'] });
    await addMember(t.app, 'project', privateProject.id, guest, 10);
    const denied = await get(refs('acme/secret'), basicAuth('x', guest.token));
    assert.equal(denied.statusCode, 403);
    assert.match(denied.body, /not allowed/);
    const reporter = await createUser(t.app, { scopes: ['api'] });
    await addMember(t.app, 'project', privateProject.id, reporter, 20);
    assert.equal((await get(refs('acme/secret'), basicAuth('oauth2', reporter.token))).statusCode, 200);
    const push = await get(refs('acme/secret', 'git-receive-pack'), basicAuth('oauth2', reporter.token));
    assert.equal(push.statusCode, 403);
    assert.match(push.body, /not allowed to push/);
    const developer = await createUser(t.app, { scopes: ['api'] });
    await addMember(t.app, 'project', privateProject.id, developer, 30);
    const devPush = await get(refs('acme/secret', 'git-receive-pack'), basicAuth('anything', developer.token));
    assert.equal(devPush.statusCode, 200);
    assert.equal(devPush.headers['content-type'], 'application/x-git-receive-pack-advertisement');
  });

  it('checks token scopes: read_repository reads, write_repository pushes, api does both, others neither', async () => {
    const cases: [string[], number, number][] = [
      [['read_repository'], 200, 403],
      [['write_repository'], 200, 200],
      [['api'], 200, 200],
      [['read_user'], 403, 403],
    ];
    for (const [scopes, read, write] of cases) {
      const dev = await createUser(t.app, { scopes });
      await addMember(t.app, 'project', privateProject.id, dev, 30);
      assert.equal((await get(refs('acme/secret'), basicAuth('oauth2', dev.token))).statusCode, read, scopes.join());
      assert.equal((await get(refs('acme/secret', 'git-receive-pack'), basicAuth('oauth2', dev.token))).statusCode, write, scopes.join());
    }
  });

  it("accepts the user's password and refuses a wrong one or an unknown token with 401", async () => {
    assert.equal((await get(refs('acme/secret'), basicAuth(owner.user.username, 'password-123'))).statusCode, 200);
    const wrong = await get(refs('acme/secret'), basicAuth(owner.user.username, 'not-the-password'));
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.headers['www-authenticate'], 'Basic realm="Basalt"');
    assert.equal((await get(refs('acme/open'), basicAuth('oauth2', 'bsp_unknown-token-value-123456'))).statusCode, 401);
  });

  it('follows a renamed project to its repository', async () => {
    const project = await createProject(t.app, owner, {
      path: 'before-rename',
      namespaceId: publicProject.namespace_id,
      visibility: 'public',
    });
    await t.api('PUT', `/projects/${project.id}`, { body: { path: 'after-rename' } });
    assert.equal((await get(refs('acme/before-rename'))).statusCode, 200);
  });

  it('refuses path tricks: encoded slashes, the dumb protocol, symlinks out of the storage', async () => {
    // (Dot segments are checked against a real server in test/e2e: inject normalises them away.)
    assert.equal((await get('/acme%2Fopen.git/info/refs?service=git-upload-pack', basicAuth('x', owner.token))).statusCode, 404);
    assert.equal((await get('/acme/open.git/info/refs')).statusCode, 403);
    const sneaky = await createProject(t.app, owner, { path: 'sneaky', namespaceId: publicProject.namespace_id, visibility: 'public' });
    const dir = t.app.modules.git.storages.path('default', 'project', sneaky.id);
    const outside = path.join(t.scratch, 'outside.git');
    await runGit(['init', '--bare', '--quiet', outside]);
    mkdirSync(path.dirname(dir), { recursive: true });
    symlinkSync(outside, dir);
    assert.equal((await get(refs('acme/sneaky'))).statusCode, 404);
  });

  it('serves upload-pack: a fetch request gets a pack', async () => {
    const work = path.join(t.scratch, 'seed-open');
    const head = await makeWorkTree(work, 3);
    await runGit(['push', '--quiet', repoDir(publicProject), 'main:main'], { cwd: work });
    const body = Buffer.concat([pkt(`want ${head} side-band-64k\n`), Buffer.from('0000'), pkt('done\n')]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/acme/open.git/git-upload-pack',
      headers: { 'content-type': 'application/x-git-upload-pack-request' },
      payload: body,
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/x-git-upload-pack-result');
    assert.ok(res.rawPayload.includes(Buffer.from('PACK')));
    const gzipped = await t.app.inject({
      method: 'POST',
      url: '/acme/open.git/git-upload-pack',
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
      payload: gzipSync(body),
    });
    assert.equal(gzipped.statusCode, 200);
    assert.ok(gzipped.rawPayload.includes(Buffer.from('PACK')));
  });

  it('a push updates the branch and publishes push_received with the ref changes', async () => {
    const developer = await createUser(t.app, { scopes: ['write_repository'] });
    await addMember(t.app, 'project', privateProject.id, developer, 30);
    const work = path.join(t.scratch, 'push-secret');
    const first = await makeWorkTree(work, 2, 'first push');
    pushes.length = 0;
    const created = await t.app.inject({
      method: 'POST',
      url: '/acme/secret.git/git-receive-pack',
      headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', developer.token) },
      payload: await receivePackBody(work, [{ old: ZERO_OID, new: first, ref: 'refs/heads/main' }], [first]),
    });
    assert.equal(created.statusCode, 200);
    assert.match(created.body, /unpack ok/);
    assert.equal(await runGit(['rev-parse', 'main'], { cwd: repoDir(privateProject) }), first);
    await runGit(
      ['commit', '--quiet', '--allow-empty', '-m', 'Second push title that is rather long and goes on past seventy characters'],
      {
        cwd: work,
      },
    );
    const second = await runGit(['rev-parse', 'HEAD'], { cwd: work });
    await runGit(['tag', 'v1.0', second], { cwd: work });
    const updated = await t.app.inject({
      method: 'POST',
      url: '/acme/secret.git/git-receive-pack',
      headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', developer.token) },
      payload: await receivePackBody(
        work,
        [
          { old: first, new: second, ref: 'refs/heads/main' },
          { old: ZERO_OID, new: second, ref: 'refs/tags/v1.0' },
        ],
        [second, `^${first}`],
      ),
    });
    assert.equal(updated.statusCode, 200);
    assert.equal(pushes.length, 2);
    const [a, b] = pushes as Extract<DomainEvent, { type: 'push_received' }>[];
    assert.equal(a?.authorId, developer.user.id);
    // What the activity feed records; the commits webhooks send are checked after.
    const activity = (refs: PushedRef[] | undefined) => refs?.map(({ commits: _commits, tagMessage: _tagMessage, ...rest }) => rest);
    assert.deepEqual(
      a?.refs[0]?.commits?.map((c) => c.title),
      ['first push 1', 'first push 2'],
    );
    assert.deepEqual(activity(a?.refs), [
      { ref: 'main', refType: 'branch', action: 'created', commitFrom: null, commitTo: first, commitCount: 2, commitTitle: 'first push 2' },
    ]);
    assert.deepEqual(
      b?.refs[0]?.commits?.map((c) => c.id),
      [second],
    );
    assert.equal(b?.refs[1]?.tagMessage, null, 'a lightweight tag has no message');
    assert.deepEqual(activity(b?.refs), [
      {
        ref: 'main',
        refType: 'branch',
        action: 'pushed',
        commitFrom: first,
        commitTo: second,
        commitCount: 1,
        commitTitle: 'Second push title that is rather long and goes on past seventy char...',
      },
      {
        ref: 'v1.0',
        refType: 'tag',
        action: 'created',
        commitFrom: null,
        commitTo: second,
        commitCount: 1,
        commitTitle: b?.refs[1]?.commitTitle ?? null,
      },
    ]);
    const project = await t.app.modules.projects.projects.findById(privateProject.id);
    assert.ok((project?.last_activity_at ?? 0) >= privateProject.last_activity_at);

    const removed = await t.app.inject({
      method: 'POST',
      url: '/acme/secret.git/git-receive-pack',
      headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', developer.token) },
      payload: await receivePackBody(work, [{ old: second, new: ZERO_OID, ref: 'refs/tags/v1.0' }], []),
    });
    assert.equal(removed.statusCode, 200);
    const last = pushes.at(-1) as Extract<DomainEvent, { type: 'push_received' }>;
    assert.deepEqual(activity(last.refs), [
      { ref: 'v1.0', refType: 'tag', action: 'removed', commitFrom: second, commitTo: null, commitCount: 0, commitTitle: null },
    ]);
  });

  it("refuses a blocked user's CI job token with 403, as the API does", async () => {
    const maintainer = await createUser(t.app);
    await addMember(t.app, 'project', privateProject.id, maintainer, 40);
    const started = await t.api('POST', `/projects/${privateProject.id}/jobs`, { token: maintainer.token, body: { name: 'build' } });
    assert.equal(started.statusCode, 201, started.body);
    const jobAuth = basicAuth('gitlab-ci-token', started.json().token);
    assert.equal((await get(refs('acme/secret'), jobAuth)).statusCode, 200);
    assert.equal((await t.api('POST', `/users/${maintainer.user.id}/block`)).statusCode, 201);
    const api = await t.api('GET', '/job', { token: null, headers: { 'job-token': started.json().token } });
    assert.equal(api.statusCode, 403);
    const refused = await get(refs('acme/secret'), jobAuth);
    assert.equal(refused.statusCode, 403);
    assert.equal(refused.body, 'Your account has been blocked.\n');
  });

  it("lets only a snippet's author, a Maintainer or an admin push to a project snippet, as the API's rule", async () => {
    const author = await createUser(t.app, { scopes: ['api'] });
    const developer = await createUser(t.app, { scopes: ['api'] });
    const maintainer = await createUser(t.app, { scopes: ['api'] });
    await addMember(t.app, 'project', publicProject.id, author, 30);
    await addMember(t.app, 'project', publicProject.id, developer, 30);
    await addMember(t.app, 'project', publicProject.id, maintainer, 40);
    const snippet = await t.api('POST', `/projects/${publicProject.id}/snippets`, {
      token: author.token,
      body: { title: 'By a developer', file_name: 'a.txt', content: 'a\n', visibility: 'public' },
    });
    assert.equal(snippet.statusCode, 201, snippet.body);
    await t.app.platform.jobs.drain();
    const url = refs(`acme/open/snippets/${snippet.json().id}`, 'git-receive-pack');
    const other = await get(url, basicAuth('x', developer.token));
    assert.equal(other.statusCode, 403);
    assert.match(other.body, /not allowed to push/);
    assert.equal((await get(url, basicAuth('x', author.token))).statusCode, 200);
    assert.equal((await get(url, basicAuth('x', maintainer.token))).statusCode, 200);
    assert.equal((await get(url, basicAuth('x', owner.token))).statusCode, 200);
    // The API answers the developer the same way.
    const removed = await t.api('DELETE', `/snippets/${snippet.json().id}`, { token: developer.token });
    assert.equal(removed.statusCode, 403);
  });

  it('a push that meets a move after info/refs is refused at the POST with the read-only message, in the protocol', async () => {
    const work = path.join(t.scratch, 'push-race');
    const head = await makeWorkTree(work, 1, 'raced');
    const push = (payload: Buffer) =>
      t.app.inject({
        method: 'POST',
        url: '/acme/open.git/git-receive-pack',
        headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', owner.token) },
        payload,
      });
    assert.equal((await get(refs('acme/open', 'git-receive-pack'), basicAuth('oauth2', owner.token))).statusCode, 200);
    await t.app.modules.projects.projects.setReadOnly(publicProject.id, true);
    try {
      const message = 'The repository is temporarily read-only. Please try again later.';
      const plain = await push(await receivePackBody(work, [{ old: ZERO_OID, new: head, ref: 'refs/heads/raced' }], [head]));
      assert.equal(plain.statusCode, 200);
      assert.equal(plain.headers['content-type'], 'application/x-git-receive-pack-result');
      assert.equal(plain.body, `${pkt('unpack ok\n').toString()}${pkt(`ng refs/heads/raced ${message}\n`).toString()}0000`);
      // With side-band-64k (what git asks for): the message on band 2, the report on band 1.
      const lines = [pkt(`${ZERO_OID} ${head} refs/heads/raced\0report-status side-band-64k agent=git/2.39\n`), Buffer.from('0000')];
      const banded = await push(Buffer.concat(lines));
      assert.equal(banded.statusCode, 200);
      const report = `${pkt('unpack ok\n').toString()}${pkt(`ng refs/heads/raced ${message}\n`).toString()}0000`;
      assert.equal(banded.body, `${pkt(`\x02${message}\n`).toString()}${pkt(`\x01${report}`).toString()}0000`);
      const zipped = await t.app.inject({
        method: 'POST',
        url: '/acme/open.git/git-receive-pack',
        headers: {
          'content-type': 'application/x-git-receive-pack-request',
          'content-encoding': 'gzip',
          authorization: basicAuth('oauth2', owner.token),
        },
        payload: gzipSync(Buffer.concat(lines)),
      });
      assert.equal(zipped.body, banded.body);
      // The move began after the first check but before the push was counted in flight.
      const containers = t.app.modules.git.containers;
      const find = containers.find.bind(containers);
      let calls = 0;
      containers.find = async (kind, id) => {
        const found = await find(kind, id);
        calls += 1;
        return found && calls === 1 ? { ...found, readOnly: false } : found;
      };
      try {
        const late = await push(Buffer.concat(lines));
        assert.equal(calls, 2);
        assert.equal(late.body, banded.body);
      } finally {
        containers.find = find;
      }
      // Not a git client (no ref command): a plain 403 with the message.
      const empty = await push(Buffer.from('0000'));
      assert.equal(empty.statusCode, 403);
      assert.equal(empty.body, `${message}\n`);
      assert.equal(
        await runGit(['rev-parse', '--verify', '--quiet', 'refs/heads/raced'], { cwd: repoDir(publicProject) }).catch(() => ''),
        '',
      );
      const active = await t.app.platform.db.selectFrom('git_active_pushes').selectAll().execute();
      assert.equal(active.length, 0);
    } finally {
      await t.app.modules.projects.projects.setReadOnly(publicProject.id, false);
    }
  });

  it('refuses pushes while the repository is read-only and still serves reads', async () => {
    await t.app.modules.projects.projects.setReadOnly(publicProject.id, true);
    try {
      const push = await get(refs('acme/open', 'git-receive-pack'), basicAuth('oauth2', owner.token));
      assert.equal(push.statusCode, 403);
      assert.match(push.body, /The repository is temporarily read-only\. Please try again later\./);
      const post = await t.app.inject({
        method: 'POST',
        url: '/acme/open.git/git-receive-pack',
        headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', owner.token) },
        payload: Buffer.from('0000'),
      });
      assert.equal(post.statusCode, 403);
      assert.equal((await get(refs('acme/open'))).statusCode, 200);
    } finally {
      await t.app.modules.projects.projects.setReadOnly(publicProject.id, false);
    }
  });
});

describe('git smart HTTP push size limit', () => {
  // Issue 18: a push over the limit is refused in the protocol (git prints the message), a body
  // with no ref command with 413; the real git client's view is in test/api/git-limits.test.ts.
  it('refuses a push larger than the configured limit: its refs in the protocol, other bodies with 413', async () => {
    const small = await createGitTestApp({ env: { GIT_MAX_PUSH_SIZE: '2048' } });
    try {
      const user = await createUser(small.app, { scopes: ['api'] });
      const project = await createProject(small.app, user, { visibility: 'private' });
      await small.app.platform.jobs.drain();
      const res = await small.app.inject({
        method: 'POST',
        url: `/${project.full_path}.git/git-receive-pack`,
        headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', user.token) },
        payload: Buffer.concat([
          pkt(`${ZERO_OID} ${'a'.repeat(40)} refs/heads/main\0report-status\n`),
          Buffer.from('0000'),
          Buffer.alloc(8192, 1),
        ]),
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/x-git-receive-pack-result');
      const message = 'Push too large: the limit is 2048 bytes (GIT_MAX_PUSH_SIZE).';
      assert.equal(res.body, `${pkt('unpack ok\n').toString()}${pkt(`ng refs/heads/main ${message}\n`).toString()}0000`);
      const other = await small.app.inject({
        method: 'POST',
        url: `/${project.full_path}.git/git-receive-pack`,
        remoteAddress: '10.0.0.9',
        headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', user.token) },
        payload: Buffer.concat([Buffer.from('0000'), Buffer.alloc(8192, 1)]),
      });
      assert.equal(other.statusCode, 413);
      assert.equal(other.body, `${message}\n`);
      // The refused push stops being in flight once its git process has ended.
      await waitUntil(
        async () => (await small.app.platform.db.selectFrom('git_active_pushes').selectAll().execute()).length === 0,
        'the refused push to leave git_active_pushes',
      );
    } finally {
      await small.close();
    }
  });
});
