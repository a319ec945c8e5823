import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { createGitTestApp, makeWorkTree, runGit, type GitTestApp } from '../helpers/git.js';
import type { ProjectRow } from '../../src/modules/projects/index.js';

describe('repository storage moves', () => {
  let t: GitTestApp;
  let owner: TestUser;
  let seeded: ProjectRow;
  let head: string;

  const storages = () => t.app.modules.git.storages;
  const refsOf = (dir: string) => runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: dir });
  const project = async (id: number) => (await t.app.modules.projects.projects.findById(id)) as ProjectRow;

  before(async () => {
    t = await createGitTestApp();
    owner = await createUser(t.app);
    const group = await createGroup(t.app, owner, { path: 'movers' });
    seeded = await createProject(t.app, owner, { path: 'seeded', namespaceId: group.id });
    await t.app.platform.jobs.drain();
    const work = path.join(t.scratch, 'seed');
    head = await makeWorkTree(work, 5);
    await runGit(['push', '--quiet', storages().path('default', 'project', seeded.id), 'main:main', 'main:refs/heads/other'], {
      cwd: work,
    });
    await runGit(['tag', 'v1', head], { cwd: work });
    await runGit(['push', '--quiet', storages().path('default', 'project', seeded.id), 'v1'], { cwd: work });
  });
  after(() => t.close());

  it('is for administrators only', async () => {
    const user = await createUser(t.app);
    assert.equal((await t.api('GET', '/project_repository_storage_moves', { token: user.token })).statusCode, 403);
    assert.equal((await t.api('GET', '/project_repository_storage_moves', { token: null })).statusCode, 401);
    const res = await t.api('POST', `/projects/${seeded.id}/repository_storage_moves`, { token: user.token, body: {} });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { message: '403 Forbidden' });
  });

  it('schedules a move (201, scheduled, read-only) and refuses a second one while it runs', async () => {
    const sourceDir = storages().path('default', 'project', seeded.id);
    const before = await refsOf(sourceDir);
    const res = await t.api('POST', `/projects/${seeded.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    assert.equal(res.statusCode, 201);
    const move = res.json();
    assert.equal(move.state, 'scheduled');
    assert.equal(move.source_storage_name, 'default');
    assert.equal(move.destination_storage_name, 'second');
    assert.equal(move.error_message, null);
    assert.deepEqual(Object.keys(move.project).sort(), [
      'created_at',
      'description',
      'id',
      'name',
      'name_with_namespace',
      'path',
      'path_with_namespace',
    ]);
    assert.equal(move.project.path_with_namespace, 'movers/seeded');
    assert.equal((await project(seeded.id)).repository_read_only, 1);

    const again = await t.api('POST', `/projects/${seeded.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), { message: { project: ['is read-only'] } });

    await t.app.platform.jobs.drain();
    const done = await t.api('GET', `/project_repository_storage_moves/${move.id}`);
    assert.equal(done.json().state, 'finished');
    const moved = await project(seeded.id);
    assert.equal(moved.repository_storage, 'second');
    assert.equal(moved.repository_read_only, 0);
    assert.equal(await refsOf(storages().path('second', 'project', seeded.id)), before);
    assert.ok(existsSync(storages().path('second', 'wiki', seeded.id)));
    assert.ok(!existsSync(sourceDir), 'the source copy is removed');
    assert.ok(!existsSync(storages().path('default', 'wiki', seeded.id)));

    const listed = await t.api('GET', '/projects?repository_storage=second');
    assert.deepEqual(
      listed.json().map((p: { id: number }) => p.id),
      [seeded.id],
    );
    assert.equal(listed.json()[0].repository_storage, 'second');
    const clone = path.join(t.scratch, 'after-move');
    await runGit(['clone', '--quiet', storages().path('second', 'project', seeded.id), clone]);
    assert.equal(await runGit(['rev-parse', 'HEAD'], { cwd: clone }), head);
  });

  it('validates storages, and lists and reads moves newest first with pagination', async () => {
    const other = await createProject(t.app, owner);
    const unknown = await t.api('POST', `/projects/${other.id}/repository_storage_moves`, {
      body: { destination_storage_name: 'nowhere' },
    });
    assert.equal(unknown.statusCode, 400);
    assert.deepEqual(unknown.json(), { message: { destination_storage_name: ['is not included in the list'] } });
    const first = await t.api('POST', `/projects/${other.id}/repository_storage_moves`, { body: {} });
    assert.equal(first.statusCode, 201);
    assert.equal(first.json().destination_storage_name, 'second', 'without a destination, another configured storage');
    await t.app.platform.jobs.drain();

    const all = await t.api('GET', '/project_repository_storage_moves?per_page=1');
    assert.equal(all.statusCode, 200);
    assert.equal(all.headers['x-total'], '2');
    assert.equal(all.json()[0].id, first.json().id);
    const mine = await t.api('GET', `/projects/${other.id}/repository_storage_moves`);
    assert.deepEqual(
      mine.json().map((m: { id: number }) => m.id),
      [first.json().id],
    );
    const one = await t.api('GET', `/projects/${other.id}/repository_storage_moves/${first.json().id}`);
    assert.equal(one.json().state, 'finished');
    const wrongProject = await t.api('GET', `/projects/${seeded.id}/repository_storage_moves/${first.json().id}`);
    assert.equal(wrongProject.statusCode, 404);
    assert.deepEqual(wrongProject.json(), { message: '404 Not found' });
    assert.equal((await t.api('GET', '/project_repository_storage_moves/999999')).statusCode, 404);
    assert.equal((await t.api('GET', '/projects/999999/repository_storage_moves')).json().message, '404 Project Not Found');
    assert.equal((await t.api('GET', '/project_repository_storage_moves/abc')).statusCode, 400);
  });

  it('bulk-schedules every project of a source storage (202) and checks the names', async () => {
    const a = await createProject(t.app, owner);
    const b = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    const missing = await t.api('POST', '/project_repository_storage_moves', { body: { destination_storage_name: 'second' } });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().message, 'source_storage_name is missing');
    const bad = await t.api('POST', '/project_repository_storage_moves', { body: { source_storage_name: 'nope' } });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), { message: { source_storage_name: ['does not have a valid value'] } });
    const res = await t.api('POST', '/project_repository_storage_moves', {
      body: { source_storage_name: 'default', destination_storage_name: 'second' },
    });
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), { message: '202 Accepted' });
    await t.app.platform.jobs.drain();
    assert.equal((await project(a.id)).repository_storage, 'second');
    assert.equal((await project(b.id)).repository_storage, 'second');
    const onDefault = await t.api('GET', '/projects?repository_storage=default');
    assert.deepEqual(onDefault.json(), []);
  });

  it('a failed copy leaves the source intact and writable and the move failed; scheduling again retries', async () => {
    const p = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    const work = path.join(t.scratch, 'fail-seed');
    await makeWorkTree(work, 3);
    const source = storages().path('default', 'project', p.id);
    await runGit(['push', '--quiet', source, 'main:main'], { cwd: work });
    const before = await refsOf(source);
    // A file where the destination's folder must go: the copy cannot be written.
    const blocker = path.dirname(storages().path('second', 'project', p.id));
    assert.ok(!existsSync(blocker));
    mkdirSync(path.dirname(blocker), { recursive: true });
    writeFileSync(blocker, 'not a directory');
    const res = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    await t.app.platform.jobs.drain();
    const failed = (await t.api('GET', `/project_repository_storage_moves/${res.json().id}`)).json();
    assert.equal(failed.state, 'failed');
    assert.match(failed.error_message, /ENOTDIR|not a directory|EEXIST/i);
    const after = await project(p.id);
    assert.equal(after.repository_storage, 'default');
    assert.equal(after.repository_read_only, 0);
    assert.equal(await refsOf(source), before);

    rmSync(blocker);
    const retry = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    assert.equal(retry.statusCode, 201);
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/project_repository_storage_moves/${retry.json().id}`)).json().state, 'finished');
    assert.equal(await refsOf(storages().path('second', 'project', p.id)), before);
  });

  it('resumes a move interrupted mid-copy: leftovers are replaced, the result is verified', async () => {
    const p = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    const work = path.join(t.scratch, 'resume-seed');
    await makeWorkTree(work, 4);
    const source = storages().path('default', 'project', p.id);
    await runGit(['push', '--quiet', source, 'main:main'], { cwd: work });
    const before = await refsOf(source);
    const res = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    // As if a worker had started, copied half, and died: state `started`, junk at the destination.
    await t.app.platform.db.updateTable('repository_storage_moves').set({ state: 'started' }).where('id', '=', res.json().id).execute();
    const destination = storages().path('second', 'project', p.id);
    mkdirSync(`${destination}.move-tmp/objects`, { recursive: true });
    mkdirSync(destination, { recursive: true });
    writeFileSync(path.join(destination, 'HEAD'), 'garbage');
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/project_repository_storage_moves/${res.json().id}`)).json().state, 'finished');
    assert.equal(await refsOf(destination), before);
    assert.ok(!existsSync(`${destination}.move-tmp`));
    assert.ok(!existsSync(source));
  });

  it('a move to the same storage changes nothing and keeps the repository', async () => {
    const p = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    const res = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'default' } });
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/project_repository_storage_moves/${res.json().id}`)).json().state, 'finished');
    assert.ok(existsSync(storages().path('default', 'project', p.id)));
  });

  it('a move resumed after a crash between its replicated state and clearing read-only ends writable', async () => {
    const p = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    const work = path.join(t.scratch, 'crash-seed');
    await makeWorkTree(work, 2);
    const source = storages().path('default', 'project', p.id);
    await runGit(['push', '--quiet', source, 'main:main'], { cwd: work });
    const res = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    // As an older worker left it: copied, switched, `replicated`, and killed before the flag was cleared.
    const destination = storages().path('second', 'project', p.id);
    mkdirSync(path.dirname(destination), { recursive: true });
    await runGit(['clone', '--quiet', '--mirror', source, destination]);
    await t.app.modules.projects.projects.setStorage(p.id, 'second', true);
    await t.app.platform.db.updateTable('repository_storage_moves').set({ state: 'replicated' }).where('id', '=', res.json().id).execute();
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/project_repository_storage_moves/${res.json().id}`)).json().state, 'finished');
    assert.equal((await project(p.id)).repository_read_only, 0);
    assert.ok(!existsSync(source));
    const next = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'default' } });
    assert.equal(next.statusCode, 201, next.body);
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/project_repository_storage_moves/${next.json().id}`)).json().state, 'finished');
    assert.equal((await project(p.id)).repository_storage, 'default');
  });

  it('a failure while switching leaves the move failed, the project on its source and writable, and a new move possible', async () => {
    const p = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    const work = path.join(t.scratch, 'switch-fail-seed');
    await makeWorkTree(work, 2);
    const source = storages().path('default', 'project', p.id);
    await runGit(['push', '--quiet', source, 'main:main'], { cwd: work });
    const before = await refsOf(source);
    const containers = t.app.modules.git.containers;
    const setReadOnly = containers.setReadOnly.bind(containers);
    let failures = 0;
    // The write that makes the repository writable again fails once (a lost connection, say).
    containers.setReadOnly = async (kind, id, readOnly, executor) => {
      if (id === p.id && !readOnly && failures === 0) {
        failures += 1;
        throw new Error('connection lost');
      }
      return setReadOnly(kind, id, readOnly, executor);
    };
    try {
      const res = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
      await t.app.platform.jobs.drain();
      assert.equal(failures, 1);
      const failed = (await t.api('GET', `/project_repository_storage_moves/${res.json().id}`)).json();
      assert.equal(failed.state, 'failed');
      assert.equal(failed.error_message, 'connection lost');
    } finally {
      containers.setReadOnly = setReadOnly;
    }
    const after = await project(p.id);
    assert.equal(after.repository_storage, 'default');
    assert.equal(after.repository_read_only, 0);
    assert.equal(await refsOf(source), before);
    assert.ok(!existsSync(storages().path('second', 'project', p.id)), 'the copy on the destination is removed');
    const retry = await t.api('POST', `/projects/${p.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    assert.equal(retry.statusCode, 201, retry.body);
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/project_repository_storage_moves/${retry.json().id}`)).json().state, 'finished');
    assert.equal(await refsOf(storages().path('second', 'project', p.id)), before);
  });

  it('bulk moves include projects pending deletion', async () => {
    const pending = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    // Marked for deletion, its removal job not run yet.
    await t.app.platform.db.updateTable('projects').set({ pending_delete: 1 }).where('id', '=', pending.id).execute();
    const res = await t.api('POST', '/project_repository_storage_moves', {
      body: { source_storage_name: 'default', destination_storage_name: 'second' },
    });
    assert.equal(res.statusCode, 202);
    await t.app.platform.jobs.drain();
    const moved = await t.app.modules.projects.projects.findByIdIncludingDeleted(pending.id);
    assert.equal(moved?.repository_storage, 'second');
    assert.equal(moved?.repository_read_only, 0);
    const moves = await t.app.modules.git.moves.list('project', pending.id, 10, 0);
    assert.equal(moves.rows[0]?.state, 'finished');
  });

  it('moves snippets and group wikis too', async () => {
    const snippet = await t.api('POST', '/snippets', {
      token: owner.token,
      body: { title: 'Moving snippet', file_name: 'a.txt', content: 'abc', visibility: 'private' },
    });
    const group = await createGroup(t.app, owner, { path: 'wikimovers' });
    await t.app.platform.jobs.drain();
    const s = await t.api('POST', `/snippets/${snippet.json().id}/repository_storage_moves`, {
      body: { destination_storage_name: 'second' },
    });
    assert.equal(s.statusCode, 201);
    assert.equal(s.json().snippet.id, snippet.json().id);
    assert.equal(s.json().snippet.author.username, owner.user.username);
    const g = await t.api('POST', `/groups/${group.id}/repository_storage_moves`, { body: { destination_storage_name: 'second' } });
    assert.equal(g.statusCode, 201);
    assert.deepEqual(g.json().group, { id: group.id, web_url: `http://basalt.test/groups/wikimovers`, name: 'wikimovers' });
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/snippet_repository_storage_moves/${s.json().id}`)).json().state, 'finished');
    assert.equal((await t.api('GET', `/group_repository_storage_moves/${g.json().id}`)).json().state, 'finished');
    const snippetRepo = storages().path('second', 'snippet', snippet.json().id);
    assert.equal(await runGit(['show', 'main:a.txt'], { cwd: snippetRepo }), 'abc');
    assert.ok(existsSync(storages().path('second', 'group_wiki', group.id)));
    assert.ok(!existsSync(storages().path('default', 'group_wiki', group.id)));
    assert.equal((await t.api('GET', `/snippets/999999/repository_storage_moves`)).json().message, '404 Snippet Not Found');
    // A snippet id that is not a number is a bad parameter, as on the other snippet routes.
    const elsewhere = await t.api('GET', '/snippets/abc');
    assert.equal(elsewhere.statusCode, 400);
    for (const [method, url] of [
      ['GET', '/snippets/abc/repository_storage_moves'],
      ['GET', `/snippets/abc/repository_storage_moves/${s.json().id}`],
      ['POST', '/snippets/abc/repository_storage_moves'],
    ] as const) {
      const res = await t.api(method, url, method === 'POST' ? { body: { destination_storage_name: 'second' } } : {});
      assert.equal(res.statusCode, 400, `${method} ${url}`);
      assert.deepEqual(res.json(), elsewhere.json(), `${method} ${url}`);
    }
  });
});

describe('repository storage moves by offering and tier', () => {
  it('do not exist on the hosted offering', async () => {
    const t = await createGitTestApp({ env: { BASALT_OFFERING: 'hosted' } });
    try {
      for (const url of ['/project_repository_storage_moves', '/snippet_repository_storage_moves', '/group_repository_storage_moves']) {
        assert.equal((await t.api('GET', url)).statusCode, 404, url);
      }
    } finally {
      await t.close();
    }
  });

  it('group moves need Premium or Ultimate; project moves do not', async () => {
    const t = await createGitTestApp({ env: { BASALT_TIER: 'free' } });
    try {
      assert.equal((await t.api('GET', '/group_repository_storage_moves')).statusCode, 404);
      assert.equal((await t.api('GET', '/project_repository_storage_moves')).statusCode, 200);
    } finally {
      await t.close();
    }
  });
});
