import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

// `_` and `%` are LIKE wildcards; paths and searches holding them must match literally on
// both dialects (SQLite has no default escape character, hence `escape '\'`).
describe('paths and searches with LIKE wildcards', () => {
  it('a member of my_group lists the private projects and subgroups below it', async () => {
    const owner = await createUser(t.app);
    const member = await createUser(t.app);
    const group = await createGroup(t.app, owner, { path: 'my_group' });
    const sub = await createGroup(t.app, owner, { path: 'sub', parentId: group.id });
    const project = await createProject(t.app, owner, { namespaceId: sub.id, path: 'deep' });
    await addMember(t.app, 'namespace', group.id, member, 20);
    const projects = await t.api('GET', '/projects?per_page=100', { token: member.token });
    assert.ok(
      projects.json().some((p: { id: number }) => p.id === project.id),
      'project below my_group/sub is listed',
    );
    const groups = await t.api('GET', '/groups?per_page=100', { token: member.token });
    assert.ok(
      groups.json().some((g: { id: number }) => g.id === sub.id),
      'subgroup my_group/sub is listed',
    );
  });

  it('renaming a_team moves its subgroups and their projects', async () => {
    const owner = await createUser(t.app);
    const group = await createGroup(t.app, owner, { path: 'a_team' });
    const sub = await createGroup(t.app, owner, { path: 'inner', parentId: group.id });
    const project = await createProject(t.app, owner, { namespaceId: sub.id, path: 'tool' });
    const renamed = await t.api('PUT', `/groups/${group.id}`, { body: { path: 'b_team' } });
    assert.equal(renamed.statusCode, 200);
    assert.equal((await t.api('GET', `/groups/${sub.id}`)).json().full_path, 'b_team/inner');
    assert.equal((await t.api('GET', `/projects/${project.id}`)).json().path_with_namespace, 'b_team/inner/tool');
  });

  it('deleting x_y removes its subgroups too', async () => {
    const owner = await createUser(t.app);
    const group = await createGroup(t.app, owner, { path: 'x_y' });
    const sub = await createGroup(t.app, owner, { path: 'below', parentId: group.id });
    assert.equal((await t.api('DELETE', `/groups/${group.id}`)).statusCode, 202);
    assert.equal((await t.api('GET', `/groups/${sub.id}`)).statusCode, 404);
    await t.app.platform.jobs.drain();
    const rows = await t.app.platform.db.selectFrom('namespaces').select('id').where('id', 'in', [group.id, sub.id]).execute();
    assert.equal(rows.length, 0);
  });

  it('a search holding _ matches it literally', async () => {
    const owner = await createUser(t.app, { username: 'find_me_user' });
    await createUser(t.app, { username: 'findXmeXuser' });
    await createGroup(t.app, owner, { path: 'find_me_group', visibility: 'public' });
    await createGroup(t.app, owner, { path: 'findXmeXgroup', visibility: 'public' });
    const home = await createGroup(t.app, owner, { path: 'searched', visibility: 'public' });
    const project = await createProject(t.app, owner, { namespaceId: home.id, path: 'find_me_project', visibility: 'public' });
    await createProject(t.app, owner, { namespaceId: home.id, path: 'findXmeXproject', visibility: 'public' });
    const names = async (url: string, key: string) =>
      (await t.api('GET', url))
        .json<Record<string, string>[]>()
        .map((row) => row[key])
        .sort();
    assert.deepEqual(await names('/users?search=find_me', 'username'), ['find_me_user']);
    assert.deepEqual(await names('/groups?search=find_me', 'path'), ['find_me_group']);
    assert.deepEqual(await names('/projects?search=find_me', 'path'), ['find_me_project']);
    for (const title of ['fix 100_percent bug', 'fix 100Xpercent bug']) {
      await t.api('POST', `/projects/${project.id}/issues`, { body: { title } });
    }
    assert.deepEqual(await names(`/projects/${project.id}/issues?search=100_percent`, 'title'), ['fix 100_percent bug']);
  });
});
