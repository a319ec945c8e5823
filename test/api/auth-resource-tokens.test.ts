import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

describe('project access tokens', () => {
  let t: TestApp;
  let owner: TestUser;
  let projectId: number;
  before(async () => {
    ({ t, owner } = await appWithUsers(['owner']));
    projectId = (await createProject(t.app, owner, { visibility: 'private' })).id;
  });
  after(() => t.close());

  it('creates a bot member at the default level 40 whose token reaches the project', async () => {
    const res = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: owner.token,
      body: { name: 'ci bot', scopes: ['api'] },
    });
    assert.equal(res.statusCode, 201);
    const body = res.json();
    assert.match(body.token, /^bsp_/);
    assert.equal(body.access_level, 40);
    assert.deepEqual(body.scopes, ['api']);
    assert.equal(body.active, true);

    const me = await t.api('GET', '/user', { token: body.token });
    assert.equal(me.statusCode, 200);
    assert.match(me.json().username, new RegExp(`^project_${projectId}_bot_[0-9a-f]+$`));
    assert.equal(me.json().bot, true);
    assert.equal(me.json().id, body.user_id);

    const member = await t.api('GET', `/projects/${projectId}/members/${body.user_id}`, { token: owner.token });
    assert.equal(member.statusCode, 200);
    assert.equal(member.json().access_level, 40);

    assert.equal((await t.api('GET', `/projects/${projectId}`, { token: body.token })).statusCode, 200);
    const issue = await t.api('POST', `/projects/${projectId}/issues`, { token: body.token, body: { title: 'from the bot' } });
    assert.equal(issue.statusCode, 201);
    const elsewhere = await createProject(t.app, owner, { visibility: 'private' });
    const other = await t.api('GET', `/projects/${elsewhere.id}`, { token: body.token });
    assert.equal(other.statusCode, 404);
    assert.deepEqual(other.json(), { message: '404 Project Not Found' });
  });

  it('the token’s access level is the bot’s: a Reporter token cannot do Maintainer work', async () => {
    const res = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: owner.token,
      body: { name: 'reader', scopes: ['read_api'], access_level: 20 },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().access_level, 20);
    const jobs = await t.api('POST', `/projects/${projectId}/jobs`, { token: res.json().token, body: {} });
    assert.equal(jobs.statusCode, 403, 'read_api token: insufficient scope');
    const writer = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: owner.token,
      body: { name: 'writer', scopes: ['api'], access_level: 20 },
    });
    const job = await t.api('POST', `/projects/${projectId}/jobs`, { token: writer.json().token, body: {} });
    assert.equal(job.statusCode, 403);
    assert.deepEqual(job.json(), { message: '403 Forbidden' });
  });

  it('only Maintainers and Owners manage them; others get 403, outsiders 404', async () => {
    const developer = await createUser(t.app);
    await addMember(t.app, 'project', projectId, developer, 30);
    const dev = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: developer.token,
      body: { name: 'x', scopes: ['api'] },
    });
    assert.equal(dev.statusCode, 403);
    assert.equal((await t.api('GET', `/projects/${projectId}/access_tokens`, { token: developer.token })).statusCode, 403);
    const outsider = await createUser(t.app);
    const out = await t.api('GET', `/projects/${projectId}/access_tokens`, { token: outsider.token });
    assert.equal(out.statusCode, 404);
    assert.deepEqual(out.json(), { message: '404 Project Not Found' });

    const maintainer = await createUser(t.app);
    await addMember(t.app, 'project', projectId, maintainer, 40);
    const ok = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: maintainer.token,
      body: { name: 'm', scopes: ['api'] },
    });
    assert.equal(ok.statusCode, 201);
    const tooHigh = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: maintainer.token,
      body: { name: 'owner-level', scopes: ['api'], access_level: 50 },
    });
    assert.equal(tooHigh.statusCode, 400);
    assert.match(tooHigh.json().message, /greater than the access level/);
  });

  it('validates name, scopes (no read_user, no admin scopes) and access level', async () => {
    const bad = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: owner.token,
      body: { name: ' ', scopes: ['read_user'], access_level: 35 },
    });
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(bad.json(), {
      message: { name: ["can't be blank"], scopes: ['can only contain available scopes'], access_level: ['is not included in the list'] },
    });
    const sudo = await t.api('POST', `/projects/${projectId}/access_tokens`, { token: owner.token, body: { name: 's', scopes: ['sudo'] } });
    assert.equal(sudo.statusCode, 400);
    const before = await t.api('GET', '/users?humans=false&per_page=100');
    const botsBefore = before.json().filter((u: { bot: boolean; username: string }) => u.username.startsWith(`project_${projectId}_bot`));
    const after = await t.api('GET', '/users?per_page=100');
    const botsAfter = after.json().filter((u: { username: string }) => u.username.startsWith(`project_${projectId}_bot`));
    assert.equal(botsAfter.length, botsBefore.length, 'a refused token leaves no bot behind');
  });

  it('lists, shows, rotates and revokes', async () => {
    const created = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: owner.token,
      body: { name: 'cycle', scopes: ['api'] },
    });
    const id: number = created.json().id;
    const list = await t.api('GET', `/projects/${projectId}/access_tokens`, { token: owner.token });
    assert.equal(list.statusCode, 200);
    assert.ok(list.json().some((tok: { id: number; token?: string }) => tok.id === id && tok.token === undefined));
    const one = await t.api('GET', `/projects/${projectId}/access_tokens/${id}`, { token: owner.token });
    assert.equal(one.json().name, 'cycle');

    const rotated = await t.api('POST', `/projects/${projectId}/access_tokens/${id}/rotate`, { token: owner.token });
    assert.equal(rotated.statusCode, 200);
    assert.notEqual(rotated.json().id, id);
    assert.equal(rotated.json().access_level, 40);
    assert.equal((await t.api('GET', '/user', { token: created.json().token })).statusCode, 401);
    assert.equal((await t.api('GET', `/projects/${projectId}`, { token: rotated.json().token })).statusCode, 200);
    const inactive = await t.api('GET', `/projects/${projectId}/access_tokens?state=inactive`, { token: owner.token });
    assert.ok(inactive.json().some((tok: { id: number }) => tok.id === id));

    const newId: number = rotated.json().id;
    assert.equal((await t.api('DELETE', `/projects/${projectId}/access_tokens/${newId}`, { token: owner.token })).statusCode, 204);
    const revoked = await t.api('GET', '/user', { token: rotated.json().token });
    assert.equal(revoked.statusCode, 401);
    assert.equal(revoked.json().error_description, 'Token was revoked. You have to re-authorize from the user.');
    const gone = await t.api('GET', `/projects/${projectId}/members/${rotated.json().user_id}`, { token: owner.token });
    assert.equal(gone.statusCode, 404, 'the bot leaves the project');
    const missing = await t.api('GET', `/projects/${projectId}/access_tokens/999999`, { token: owner.token });
    assert.deepEqual(missing.json(), { message: '404 Project Access Token Not Found' });
  });

  it('a personal token id is not a project access token', async () => {
    const personal = await t.api('POST', '/user/personal_access_tokens', { token: owner.token, body: { name: 'mine', scopes: ['api'] } });
    const res = await t.api('DELETE', `/projects/${projectId}/access_tokens/${personal.json().id}`, { token: owner.token });
    assert.equal(res.statusCode, 404);
    assert.equal((await t.api('GET', '/user', { token: personal.json().token })).statusCode, 200);
  });
});

describe('group access tokens', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('a group token’s bot is a group member and reaches the group’s projects', async () => {
    const owner = await createUser(t.app);
    const group = await createGroup(t.app, owner, { visibility: 'private' });
    const project = await createProject(t.app, owner, { namespaceId: group.id, visibility: 'private' });
    const res = await t.api('POST', `/groups/${group.id}/access_tokens`, {
      token: owner.token,
      body: { name: 'group bot', scopes: ['read_api'], access_level: 30 },
    });
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().access_level, 30);
    const me = await t.api('GET', '/user', { token: res.json().token });
    assert.match(me.json().username, new RegExp(`^group_${group.id}_bot_`));
    assert.equal((await t.api('GET', `/groups/${group.id}`, { token: res.json().token })).statusCode, 200);
    assert.equal((await t.api('GET', `/projects/${project.id}`, { token: res.json().token })).statusCode, 200);
    const list = await t.api('GET', `/groups/${encodeURIComponent(group.full_path)}/access_tokens`, { token: owner.token });
    assert.equal(list.json().length, 1);
    const missing = await t.api('GET', `/groups/${group.id}/access_tokens/999999`, { token: owner.token });
    assert.deepEqual(missing.json(), { message: '404 Group Access Token Not Found' });
  });
});

describe('access tokens on the hosted offering', () => {
  const apps: TestApp[] = [];
  after(async () => {
    for (const app of apps) await app.close();
  });

  for (const [tier, status] of [
    ['free', 403],
    ['premium', 201],
    ['ultimate', 201],
  ] as const) {
    it(`tier ${tier}: ${status}`, async () => {
      const t = await createTestApp({ env: { BASALT_OFFERING: 'hosted', BASALT_TIER: tier } });
      apps.push(t);
      const owner = await createUser(t.app);
      const project = await createProject(t.app, owner);
      const group = await createGroup(t.app, owner);
      const res = await t.api('POST', `/projects/${project.id}/access_tokens`, {
        token: owner.token,
        body: { name: 'x', scopes: ['api'] },
      });
      assert.equal(res.statusCode, status);
      const groupRes = await t.api('POST', `/groups/${group.id}/access_tokens`, {
        token: owner.token,
        body: { name: 'x', scopes: ['api'] },
      });
      assert.equal(groupRes.statusCode, status);
      if (status === 403) {
        assert.deepEqual(res.json(), {
          message: '403 Forbidden - Project access tokens need the Premium or Ultimate tier on the hosted offering',
        });
        assert.deepEqual(groupRes.json(), {
          message: '403 Forbidden - Group access tokens need the Premium or Ultimate tier on the hosted offering',
        });
      }
    });
  }

  it('self-managed free tier has them', async () => {
    const t = await createTestApp({ env: { BASALT_TIER: 'free' } });
    apps.push(t);
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    const res = await t.api('POST', `/projects/${project.id}/access_tokens`, { token: owner.token, body: { name: 'x', scopes: ['api'] } });
    assert.equal(res.statusCode, 201);
  });
});
