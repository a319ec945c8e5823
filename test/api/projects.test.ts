import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

describe('groups, projects, members', () => {
  it('creates nested groups with full paths and a project readable by encoded path', async () => {
    const top = await t.api('POST', '/groups', { body: { name: 'Acme', path: 'acme' } });
    assert.equal(top.statusCode, 201);
    const sub = await t.api('POST', '/groups', { body: { name: 'Tools', path: 'tools', parent_id: top.json().id } });
    assert.equal(sub.statusCode, 201);
    assert.equal(sub.json().full_path, 'acme/tools');
    assert.equal(sub.json().full_name, 'Acme / Tools');
    const project = await t.api('POST', '/projects', { body: { name: 'Hammer', path: 'hammer', namespace_id: sub.json().id } });
    assert.equal(project.statusCode, 201);
    assert.equal(project.json().path_with_namespace, 'acme/tools/hammer');
    const byPath = await t.api('GET', '/projects/acme%2Ftools%2Fhammer');
    assert.equal(byPath.statusCode, 200);
    assert.equal(byPath.json().id, project.json().id);
    const groupByPath = await t.api('GET', '/groups/acme%2Ftools');
    assert.equal(groupByPath.json().id, sub.json().id);
  });

  it('a taken path is 409', async () => {
    await t.api('POST', '/groups', { body: { name: 'Taken', path: 'taken' } });
    const again = await t.api('POST', '/groups', { body: { name: 'Taken', path: 'TAKEN' } });
    assert.equal(again.statusCode, 409);
    const userPath = await t.api('POST', '/groups', { body: { name: 'root', path: 'root' } });
    assert.equal(userPath.statusCode, 409);
  });

  it('reserved names cannot be group paths', async () => {
    for (const path of ['api', 'oauth', 'users', '-', 'errortracking']) {
      const res = await t.api('POST', '/groups', { body: { name: path, path } });
      assert.equal(res.statusCode, 400, path);
      assert.ok(res.json().message.path, path);
    }
  });

  it('a wrong method on an existing path is 405 with Allow', async () => {
    const res = await t.api('PATCH', '/projects');
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, POST');
    assert.ok(res.json().message);
  });

  it('an unknown path is 404 with a message body', async () => {
    const res = await t.api('GET', '/nothing-here');
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 Not Found' });
  });

  it('malformed JSON is a 400 with a message, never a 500', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v4/groups',
      headers: { 'private-token': 'bsp_test-root-token-0123456789abcdef', 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().message, /Malformed JSON/);
  });

  it('a body over the limit is 413', async () => {
    const res = await t.api('POST', '/groups', { body: { name: 'x'.repeat(1024 * 1024 + 10) } });
    assert.equal(res.statusCode, 413);
    assert.deepEqual(res.json(), { message: '413 Request Entity Too Large' });
  });

  it('private projects are 404 to strangers, members inherit access from ancestor groups', async () => {
    const owner = await createUser(t.app);
    const stranger = await createUser(t.app);
    const reporter = await createUser(t.app);
    const group = await createGroup(t.app, owner);
    const sub = await createGroup(t.app, owner, { parentId: group.id });
    const project = await createProject(t.app, owner, { namespaceId: sub.id });
    const hidden = await t.api('GET', `/projects/${project.id}`, { token: stranger.token });
    assert.equal(hidden.statusCode, 404);
    assert.deepEqual(hidden.json(), { message: '404 Project Not Found' });
    await addMember(t.app, 'namespace', group.id, reporter, 20);
    const seen = await t.api('GET', `/projects/${project.id}`, { token: reporter.token });
    assert.equal(seen.statusCode, 200);
    assert.equal(seen.json().permissions.project_access.access_level, 20);
    const cannotEdit = await t.api('PUT', `/projects/${project.id}`, { token: reporter.token, body: { description: 'x' } });
    assert.equal(cannotEdit.statusCode, 403);
    const all = await t.api('GET', `/projects/${project.id}/members/all`, { token: reporter.token });
    assert.ok(all.json().some((m: { id: number; access_level: number }) => m.id === reporter.user.id && m.access_level === 20));
  });

  it('a public project is readable anonymously and listed', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'public' });
    const res = await t.api('GET', `/projects/${project.id}`, { token: null });
    assert.equal(res.statusCode, 200);
    const list = await t.api('GET', '/projects?per_page=100', { token: null });
    assert.ok(list.json().some((p: { id: number }) => p.id === project.id));
  });

  it('renaming keeps the old path as a 301 redirect', async () => {
    const created = await t.api('POST', '/projects', { body: { name: 'Old Name', path: 'old-name' } });
    const id = created.json().id;
    const renamed = await t.api('PUT', `/projects/${id}`, { body: { path: 'new-name' } });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().path_with_namespace, 'root/new-name');
    const old = await t.api('GET', '/projects/root%2Fold-name');
    assert.equal(old.statusCode, 301);
    assert.equal(old.headers.location, 'http://basalt.test/api/v4/projects/root%2Fnew-name');
    const write = await t.api('PUT', '/projects/root%2Fold-name', { body: { description: 'x' } });
    assert.equal(write.statusCode, 405);
  });

  it('renaming a group redirects paths of projects below it', async () => {
    const group = await t.api('POST', '/groups', { body: { name: 'Before', path: 'before' } });
    await t.api('POST', '/projects', { body: { name: 'app', namespace_id: group.json().id } });
    await t.api('PUT', `/groups/${group.json().id}`, { body: { path: 'after' } });
    const moved = await t.api('GET', '/projects/before%2Fapp');
    assert.equal(moved.statusCode, 301);
    assert.match(String(moved.headers.location), /after%2Fapp$/);
    const now = await t.api('GET', '/projects/after%2Fapp');
    assert.equal(now.statusCode, 200);
    const groupMoved = await t.api('GET', '/groups/before');
    assert.equal(groupMoved.statusCode, 301);
  });

  it('DELETE of a project answers 202 and the worker removes it', async () => {
    const created = await t.api('POST', '/projects', { body: { name: 'doomed' } });
    const id = created.json().id;
    const res = await t.api('DELETE', `/projects/${id}`);
    assert.equal(res.statusCode, 202);
    assert.deepEqual(res.json(), { message: '202 Accepted' });
    assert.equal((await t.api('GET', `/projects/${id}`)).statusCode, 404);
    await t.app.platform.jobs.drain();
    const row = await t.app.platform.db.selectFrom('projects').select('id').where('id', '=', id).executeTakeFirst();
    assert.equal(row, undefined);
  });

  it('DELETE of a group removes its subgroups and projects in the worker', async () => {
    const group = await t.api('POST', '/groups', { body: { name: 'gone', path: 'gone' } });
    const sub = await t.api('POST', '/groups', { body: { name: 'inner', path: 'inner', parent_id: group.json().id } });
    const project = await t.api('POST', '/projects', { body: { name: 'p', namespace_id: sub.json().id } });
    assert.equal((await t.api('DELETE', `/groups/${group.json().id}`)).statusCode, 202);
    await t.app.platform.jobs.drain();
    assert.equal((await t.api('GET', `/projects/${project.json().id}`)).statusCode, 404);
    const rows = await t.app.platform.db
      .selectFrom('namespaces')
      .select('id')
      .where('id', 'in', [group.json().id, sub.json().id])
      .execute();
    assert.equal(rows.length, 0);
  });

  it('DELETE with an older If-Unmodified-Since is 412', async () => {
    const created = await t.api('POST', '/projects', { body: { name: 'guarded' } });
    const past = new Date(Date.now() - 3600_000).toUTCString();
    const res = await t.api('DELETE', `/projects/${created.json().id}`, { headers: { 'if-unmodified-since': past } });
    assert.equal(res.statusCode, 412);
    assert.deepEqual(res.json(), { message: '412 Precondition Failed' });
    const future = new Date(Date.now() + 3600_000).toUTCString();
    assert.equal((await t.api('DELETE', `/projects/${created.json().id}`, { headers: { 'if-unmodified-since': future } })).statusCode, 202);
  });

  it('an id too large for any row finds nothing (404), on every database', async () => {
    for (const path of ['/groups/99999999999999999999999', '/projects/99999999999999999999999']) {
      assert.equal((await t.api('GET', path)).statusCode, 404, path);
      assert.equal((await t.api('DELETE', path)).statusCode, 404, path);
    }
    const sudo = await t.api('GET', '/user', { headers: { sudo: '99999999999999999999999' } });
    assert.equal(sudo.statusCode, 404);
  });

  it('repeated integer query values are rejected with 400', async () => {
    const res = await t.api('GET', '/projects?page=1&page=2');
    assert.equal(res.statusCode, 400);
  });
});

describe('issues and notes', () => {
  // Shares the file's app (one database per file keeps the suite fast on PostgreSQL).
  it('numbers issues per project, closes and reopens, and lists notes', async () => {
    const project = (await t.api('POST', '/projects', { body: { name: 'tracker' } })).json();
    const first = await t.api('POST', `/projects/${project.id}/issues`, { body: { title: 'First', description: 'd' } });
    const second = await t.api('POST', `/projects/${project.id}/issues`, { body: { title: 'Second', issue_type: 'incident' } });
    assert.equal(first.statusCode, 201);
    assert.equal(first.json().iid, 1);
    assert.equal(second.json().iid, 2);
    assert.equal(second.json().issue_type, 'incident');
    const closed = await t.api('PUT', `/projects/${project.id}/issues/1`, { body: { state_event: 'close' } });
    assert.equal(closed.json().state, 'closed');
    assert.equal(closed.json().closed_by.username, 'root');
    const reopened = await t.api('PUT', `/projects/${project.id}/issues/1`, { body: { state_event: 'reopen' } });
    assert.equal(reopened.json().state, 'opened');
    const note = await t.api('POST', `/projects/${project.id}/issues/1/notes`, { body: { body: 'Looking into it' } });
    assert.equal(note.statusCode, 201);
    assert.equal(note.json().noteable_type, 'Issue');
    assert.equal(note.json().noteable_iid, 1);
    const notes = await t.api('GET', `/projects/${project.id}/issues/1/notes`);
    assert.equal(notes.json().length, 1);
    const list = await t.api('GET', `/projects/${project.id}/issues?state=opened`);
    assert.equal(list.json().length, 2);
    assert.equal(list.headers['x-total'], '2');
  });

  it('a missing title names the attribute', async () => {
    const project = (await t.api('POST', '/projects', { body: { name: 'tracker2' } })).json();
    const res = await t.api('POST', `/projects/${project.id}/issues`, { body: {} });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().message, 'title is missing');
  });

  it('a non-numeric issue iid is 400', async () => {
    const project = (await t.api('POST', '/projects', { body: { name: 'tracker3' } })).json();
    const res = await t.api('GET', `/projects/${project.id}/issues/abc`);
    assert.equal(res.statusCode, 400);
  });

  it('concurrent issue creation never repeats an iid', async () => {
    const project = (await t.api('POST', '/projects', { body: { name: 'busy' } })).json();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.api('POST', `/projects/${project.id}/issues`, { body: { title: `n${i}` } })),
    );
    const iids = results.map((r) => r.json().iid as number).sort((a, b) => a - b);
    assert.deepEqual(iids, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});
