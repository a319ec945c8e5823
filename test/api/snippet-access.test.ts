// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { basicAuth, createGitTestApp, type GitTestApp } from '../helpers/git.js';
import type { ProjectRow } from '../../src/modules/projects/index.js';

/** Access to a project snippet is decided by the project first; authorship only adds the right to edit. */
describe('project snippets: access decided before authorship', () => {
  let t: GitTestApp;
  let owner: TestUser;

  before(async () => {
    t = await createGitTestApp();
    owner = await createUser(t.app);
  });
  after(() => t.close());

  const refs = (path: string, service: string, token: string) =>
    t.app.inject({ method: 'GET', url: `/${path}.git/info/refs?service=${service}`, headers: { authorization: basicAuth('x', token) } });
  const snippetIn = async (project: ProjectRow, author: TestUser, visibility: string) => {
    const res = await t.api('POST', `/projects/${project.id}/snippets`, {
      token: author.token,
      body: { title: `By ${author.user.username}`, file_name: 'a.txt', content: 'a\n', visibility },
    });
    assert.equal(res.statusCode, 201, res.body);
    await t.app.platform.jobs.drain();
    return res.json<{ id: number }>();
  };
  const removeMember = async (project: ProjectRow, user: TestUser) => {
    const res = await t.api('DELETE', `/projects/${project.id}/members/${user.user.id}`);
    assert.equal(res.statusCode, 204, res.body);
  };
  const listed = async (user: TestUser) =>
    (await t.api('GET', '/snippets', { token: user.token })).json().map((s: { id: number }) => s.id) as number[];

  it('a member removed from a private project loses the snippets it wrote there, through the API and git', async () => {
    const author = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'private' });
    await addMember(t.app, 'project', project.id, author, 30);
    const snippet = await snippetIn(project, author, 'private');
    const repo = `${owner.user.username}/${project.path}/snippets/${snippet.id}`;
    const personal = await t.api('POST', '/snippets', { token: author.token, body: { title: 'Mine', file_name: 'm.txt', content: 'm\n' } });
    assert.equal(personal.statusCode, 201);

    assert.equal((await t.api('GET', `/snippets/${snippet.id}`, { token: author.token })).statusCode, 200);
    assert.equal((await refs(repo, 'git-upload-pack', author.token)).statusCode, 200);
    assert.equal((await refs(repo, 'git-receive-pack', author.token)).statusCode, 200);
    assert.ok((await listed(author)).includes(snippet.id));

    await removeMember(project, author);

    assert.equal((await t.api('GET', `/snippets/${snippet.id}`, { token: author.token })).statusCode, 404);
    assert.equal((await t.api('GET', `/projects/${project.id}/snippets/${snippet.id}`, { token: author.token })).statusCode, 404);
    assert.equal((await t.api('DELETE', `/snippets/${snippet.id}`, { token: author.token })).statusCode, 404);
    assert.equal((await refs(repo, 'git-upload-pack', author.token)).statusCode, 404);
    assert.equal((await refs(repo, 'git-receive-pack', author.token)).statusCode, 404);
    assert.deepEqual(await listed(author), [personal.json().id]);
    // Its personal snippet stays its own; the project's owner keeps the project's.
    assert.equal((await t.api('GET', `/snippets/${personal.json().id}`, { token: author.token })).statusCode, 200);
    assert.equal((await refs(repo, 'git-upload-pack', owner.token)).statusCode, 200);
  });

  it('a member removed from a public project reads its snippets there only as anyone may, and changes none', async () => {
    const author = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'public' });
    await addMember(t.app, 'project', project.id, author, 30);
    const open = await snippetIn(project, author, 'public');
    const closed = await snippetIn(project, author, 'private');
    const openRepo = `${owner.user.username}/${project.path}/snippets/${open.id}`;
    assert.equal((await refs(openRepo, 'git-receive-pack', author.token)).statusCode, 200);

    await removeMember(project, author);

    assert.equal((await t.api('GET', `/snippets/${open.id}`, { token: author.token })).statusCode, 200);
    assert.equal((await refs(openRepo, 'git-upload-pack', author.token)).statusCode, 200);
    const push = await refs(openRepo, 'git-receive-pack', author.token);
    assert.equal(push.statusCode, 403);
    assert.equal((await t.api('DELETE', `/snippets/${open.id}`, { token: author.token })).statusCode, 403);
    assert.equal((await t.api('GET', `/snippets/${closed.id}`, { token: author.token })).statusCode, 404);
    const closedRepo = `${owner.user.username}/${project.path}/snippets/${closed.id}`;
    assert.equal((await refs(closedRepo, 'git-upload-pack', author.token)).statusCode, 404);
    assert.deepEqual(await listed(author), [open.id]);
  });
});
