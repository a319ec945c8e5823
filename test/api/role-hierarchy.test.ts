// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';

/**
 * Role hierarchy (issue 18, item 1): nobody acts above their own level. For every actor
 * (Guest..Owner, admin) and every target level, on a project and on a group: granting that
 * level, changing a member who holds it (up and down), removing one, and creating, rotating,
 * revoking, listing and showing an access token of that level. The expected answer is derived
 * from the rule, not listed: an administrator may do everything; anyone else needs the least
 * role of the operation and at least the level they act on. A refusal never carries a secret.
 */

const LEVELS = [10, 20, 30, 40, 50] as const;
const NAMES: Record<number, string> = { 10: 'Guest', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };
type Kind = 'project' | 'group';
type ActorKey = (typeof LEVELS)[number] | 'admin';
const ACTORS: readonly ActorKey[] = [...LEVELS, 'admin'];
/** The least role that manages members, and tokens (group tokens: Owners only, as in the established product). */
const MEMBER_MIN: Record<Kind, number> = { project: 40, group: 50 };
const TOKEN_MIN: Record<Kind, number> = { project: 40, group: 50 };

/** The rule: admins may; others need the operation's least role and at least every level involved. */
const may = (actor: ActorKey, min: number, ...levels: number[]) =>
  actor === 'admin' || (actor >= min && levels.every((level) => actor >= level));
const memberKind = (kind: Kind) => (kind === 'project' ? 'project' : 'namespace');

describe('role hierarchy: every actor level against every target level', () => {
  let t: TestApp;
  let admin: TestUser;
  const containers = {} as Record<Kind, { id: number; actors: Record<number, TestUser>; targets: Record<number, TestUser[]> }>;

  let rootId: number;

  /** Puts `user` in the container at exactly `level` (or takes them out), as root would. */
  async function seat(kind: Kind, id: number, user: TestUser, level: number | null): Promise<void> {
    const members = t.app.modules.projects.members;
    const existing = await members.get(memberKind(kind), id, user.user.id).catch(() => undefined);
    if (existing) await members.remove({ userId: rootId, level: 50 }, memberKind(kind), id, user.user.id, null);
    if (level !== null) await addMember(t.app, memberKind(kind), id, user, level);
  }

  before(async () => {
    t = await createTestApp();
    rootId = (await t.api('GET', '/user')).json<{ id: number }>().id;
    admin = await createUser(t.app, { admin: true });
    for (const kind of ['project', 'group'] as const) {
      const creator = await createUser(t.app);
      // A project in a personal namespace and a group whose creator stays its owner: only the direct levels below count.
      const id =
        kind === 'project'
          ? (await createProject(t.app, creator, { visibility: 'private' })).id
          : (await createGroup(t.app, creator, { visibility: 'private' })).id;
      const actors: Record<number, TestUser> = {};
      const targets: Record<number, TestUser[]> = {};
      for (const level of LEVELS) {
        actors[level] = await createUser(t.app);
        await addMember(t.app, memberKind(kind), id, actors[level], level);
        targets[level] = [await createUser(t.app), await createUser(t.app), await createUser(t.app), await createUser(t.app)];
      }
      containers[kind] = { id, actors, targets };
    }
  });
  after(() => t.close());

  for (const kind of ['project', 'group'] as const) {
    for (const actor of ACTORS) {
      const name = actor === 'admin' ? 'an administrator' : `${actor === 50 ? 'an' : 'a'} ${NAMES[actor]}`;
      it(`${kind}: ${name} grants, changes, removes members and manages tokens only up to their own level`, async () => {
        const { id, actors, targets } = containers[kind];
        const token = actor === 'admin' ? admin.token : actors[actor]!.token;
        const base = `/${kind}s/${id}`;
        const problems: string[] = [];
        const expect = (what: string, res: LightMyRequestResponse, status: number, secret: boolean) => {
          if (res.statusCode !== status) problems.push(`${what}: ${res.statusCode} ${res.body} (expected ${status})`);
          const body: unknown = res.body ? res.json() : null;
          const items: unknown[] = Array.isArray(body) ? body : [body];
          const leaked = items.some((item) => typeof item === 'object' && item !== null && 'token' in item);
          if (leaked !== secret) problems.push(`${what}: ${secret ? 'no secret returned' : 'a secret was returned'}`);
        };

        for (const level of LEVELS) {
          const [up, down, removed, newcomer] = targets[level]!;
          for (const user of [up!, down!, removed!]) await seat(kind, id, user, level);
          await seat(kind, id, newcomer!, null);
          const members = `${base}/members`;

          const grant = await t.api('POST', members, { token, body: { user_id: newcomer!.user.id, access_level: level } });
          expect(`grant ${NAMES[level]}`, grant, may(actor, MEMBER_MIN[kind], level) ? 201 : 403, false);
          if (level < 50) {
            const res = await t.api('PUT', `${members}/${up!.user.id}`, { token, body: { access_level: level + 10 } });
            expect(`promote a ${NAMES[level]}`, res, may(actor, MEMBER_MIN[kind], level, level + 10) ? 200 : 403, false);
          }
          if (level > 10) {
            const res = await t.api('PUT', `${members}/${down!.user.id}`, { token, body: { access_level: level - 10 } });
            expect(`demote a ${NAMES[level]}`, res, may(actor, MEMBER_MIN[kind], level) ? 200 : 403, false);
          }
          const remove = await t.api('DELETE', `${members}/${removed!.user.id}`, { token });
          expect(`remove a ${NAMES[level]}`, remove, may(actor, MEMBER_MIN[kind], level) ? 204 : 403, false);

          const tokens = `${base}/access_tokens`;
          const create = await t.api('POST', tokens, { token, body: { name: 'cell', scopes: ['read_api'], access_level: level } });
          // Above one's own level, creation keeps the established product's 400 (its message names the rule).
          const createStatus = may(actor, TOKEN_MIN[kind], level) ? 201 : may(actor, TOKEN_MIN[kind]) ? 400 : 403;
          expect(`create a ${NAMES[level]} token`, create, createStatus, createStatus === 201);
          const fixture = async () => {
            const res = await t.api('POST', tokens, { body: { name: 'target', scopes: ['read_api'], access_level: level } });
            assert.equal(res.statusCode, 201, res.body);
            return res.json<{ id: number; token: string }>();
          };
          const [rotated, revoked] = [await fixture(), await fixture()];
          const reader = may(actor, TOKEN_MIN[kind]) ? 200 : 403;
          expect(`list tokens (${NAMES[level]} among them)`, await t.api('GET', tokens, { token }), reader, false);
          expect(`show a ${NAMES[level]} token`, await t.api('GET', `${tokens}/${rotated.id}`, { token }), reader, false);
          const manage = may(actor, TOKEN_MIN[kind], level);
          const rotate = await t.api('POST', `${tokens}/${rotated.id}/rotate`, { token });
          expect(`rotate a ${NAMES[level]} token`, rotate, manage ? 200 : 403, manage);
          const revoke = await t.api('DELETE', `${tokens}/${revoked.id}`, { token });
          expect(`revoke a ${NAMES[level]} token`, revoke, manage ? 204 : 403, false);
          // A refused rotation or revocation leaves the token working.
          const still = await t.api('GET', '/user', { token: manage ? rotate.json<{ token: string }>().token : revoked.token });
          if (still.statusCode !== 200) problems.push(`the ${NAMES[level]} token stopped working: ${still.statusCode}`);
        }
        assert.deepEqual(problems, []);
      });
    }
  }
});

describe('role hierarchy: regressions', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const day = 86_400_000;
  const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);

  it('a Maintainer cannot rotate or revoke an Owner-level project token (rotating handed over its secret)', async () => {
    const owner = await createUser(t.app);
    const maintainer = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'private' });
    await addMember(t.app, 'project', project.id, maintainer, 40);
    const created = await t.api('POST', `/projects/${project.id}/access_tokens`, {
      token: owner.token,
      body: { name: 'deploy', scopes: ['api'], access_level: 50 },
    });
    assert.equal(created.statusCode, 201);
    const id = created.json<{ id: number }>().id;
    const rotate = await t.api('POST', `/projects/${project.id}/access_tokens/${id}/rotate`, { token: maintainer.token });
    assert.equal(rotate.statusCode, 403);
    assert.equal(rotate.json().token, undefined);
    assert.equal((await t.api('DELETE', `/projects/${project.id}/access_tokens/${id}`, { token: maintainer.token })).statusCode, 403);
    assert.equal((await t.api('GET', '/user', { token: created.json().token })).statusCode, 200, 'the token still works');
  });

  it('what a token holds is its bot’s membership too: a promoted Maintainer-level bot is out of a Maintainer’s reach', async () => {
    const owner = await createUser(t.app);
    const maintainer = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'private' });
    await addMember(t.app, 'project', project.id, maintainer, 40);
    const created = await t.api('POST', `/projects/${project.id}/access_tokens`, {
      token: owner.token,
      body: { name: 'b', scopes: ['api'] },
    });
    const { id, user_id: botId } = created.json<{ id: number; user_id: number }>();
    const promote = await t.api('PUT', `/projects/${project.id}/members/${botId}`, { token: owner.token, body: { access_level: 50 } });
    assert.equal(promote.statusCode, 200);
    const rotate = await t.api('POST', `/projects/${project.id}/access_tokens/${id}/rotate`, { token: maintainer.token });
    assert.equal(rotate.statusCode, 403);
    assert.equal(rotate.json().token, undefined);
  });

  it('a token’s bot joins no other project or group (a Maintainer rotating it would hold that access too)', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'private' });
    const elsewhere = await createProject(t.app, owner, { visibility: 'private' });
    const group = await createGroup(t.app, owner, { visibility: 'private' });
    const created = await t.api('POST', `/projects/${project.id}/access_tokens`, {
      token: owner.token,
      body: { name: 'b', scopes: ['api'] },
    });
    const botId = created.json<{ user_id: number }>().user_id;
    for (const base of [`/projects/${elsewhere.id}`, `/groups/${group.id}`]) {
      const add = await t.api('POST', `${base}/members`, { token: owner.token, body: { user_id: botId, access_level: 50 } });
      assert.equal(add.statusCode, 400, base);
      assert.deepEqual(add.json(), { message: { user_id: ['project bots cannot be added to other groups / projects'] } });
    }
    assert.equal((await t.api('GET', `/projects/${elsewhere.id}`, { token: created.json().token })).statusCode, 404);
  });

  it('group access tokens are for group Owners only: a group Maintainer gets 403 on every token route', async () => {
    const owner = await createUser(t.app);
    const maintainer = await createUser(t.app);
    const group = await createGroup(t.app, owner, { visibility: 'private' });
    await addMember(t.app, 'namespace', group.id, maintainer, 40);
    const base = `/groups/${group.id}/access_tokens`;
    const created = await t.api('POST', base, { token: owner.token, body: { name: 'g', scopes: ['read_api'], access_level: 30 } });
    assert.equal(created.statusCode, 201);
    const id = created.json<{ id: number }>().id;
    const create = await t.api('POST', base, { token: maintainer.token, body: { name: 'm', scopes: ['read_api'], access_level: 30 } });
    assert.equal(create.statusCode, 403);
    assert.equal(create.json().token, undefined);
    assert.equal((await t.api('GET', base, { token: maintainer.token })).statusCode, 403);
    assert.equal((await t.api('GET', `${base}/${id}`, { token: maintainer.token })).statusCode, 403);
    const rotate = await t.api('POST', `${base}/${id}/rotate`, { token: maintainer.token });
    assert.equal(rotate.statusCode, 403);
    assert.equal(rotate.json().token, undefined);
    assert.equal((await t.api('DELETE', `${base}/${id}`, { token: maintainer.token })).statusCode, 403);
    assert.equal((await t.api('POST', `${base}/${id}/rotate`, { token: owner.token })).statusCode, 200);
  });

  it('a project Maintainer cannot demote or remove a project Owner, directly or through an inherited level', async () => {
    const groupOwner = await createUser(t.app);
    const groupMaintainer = await createUser(t.app);
    const projectMaintainer = await createUser(t.app);
    const projectOwner = await createUser(t.app);
    const group = await createGroup(t.app, groupOwner, { visibility: 'private' });
    const project = await createProject(t.app, groupOwner, { namespaceId: group.id, visibility: 'private' });
    await addMember(t.app, 'namespace', group.id, groupMaintainer, 40);
    await addMember(t.app, 'project', project.id, projectMaintainer, 40);
    await addMember(t.app, 'project', project.id, projectOwner, 50);
    const member = `/projects/${project.id}/members/${projectOwner.user.id}`;
    for (const maintainer of [projectMaintainer, groupMaintainer]) {
      assert.equal((await t.api('PUT', member, { token: maintainer.token, body: { access_level: 30 } })).statusCode, 403);
      assert.equal((await t.api('DELETE', member, { token: maintainer.token })).statusCode, 403);
    }
    assert.equal((await t.api('GET', member, { token: projectOwner.token })).json().access_level, 50);
    // The group's Owner holds Owner on the project through the group.
    assert.equal((await t.api('PUT', member, { token: groupOwner.token, body: { access_level: 30 } })).statusCode, 200);
    assert.equal((await t.api('DELETE', member, { token: groupOwner.token })).statusCode, 204);
  });

  it('the last-owner rule counts only active, unexpired, human owners', async () => {
    const cases = {
      blocked: async (groupId: number, other: TestUser) => {
        await addMember(t.app, 'namespace', groupId, other, 50);
        assert.equal((await t.api('POST', `/users/${other.user.id}/block`)).statusCode, 201);
      },
      expired: async (groupId: number, other: TestUser, owner: TestUser) => {
        const body = { user_id: other.user.id, access_level: 50, expires_at: date(t.clock.now() + 2 * day) };
        assert.equal((await t.api('POST', `/groups/${groupId}/members`, { token: owner.token, body })).statusCode, 201);
        t.manual?.advance(3 * day);
      },
      bot: async (groupId: number, _other: TestUser, owner: TestUser) => {
        const body = { name: 'owner bot', scopes: ['read_api'], access_level: 50 };
        assert.equal((await t.api('POST', `/groups/${groupId}/access_tokens`, { token: owner.token, body })).statusCode, 201);
      },
    };
    for (const [name, arrange] of Object.entries(cases)) {
      const owner = await createUser(t.app);
      const other = await createUser(t.app);
      const group = await createGroup(t.app, owner, { visibility: 'private' });
      await arrange(group.id, other, owner);
      const self = `/groups/${group.id}/members/${owner.user.id}`;
      const demote = await t.api('PUT', self, { token: owner.token, body: { access_level: 40 } });
      assert.equal(demote.statusCode, 400, `${name}: demote`);
      assert.deepEqual(demote.json(), { message: '400 Bad request - A group must have at least one owner' });
      assert.equal((await t.api('DELETE', self, { token: owner.token })).statusCode, 400, `${name}: leave`);
      assert.equal((await t.api('DELETE', self)).statusCode, 400, `${name}: removed by an administrator`);
      // With a second owner who can act, the first may go.
      const second = await createUser(t.app);
      await addMember(t.app, 'namespace', group.id, second, 50);
      assert.equal((await t.api('DELETE', self, { token: owner.token })).statusCode, 204, `${name}: leave with another owner`);
    }
  });

  it('an expires_at in the past is 400 for memberships and access tokens', async () => {
    const owner = await createUser(t.app);
    const newcomer = await createUser(t.app);
    const group = await createGroup(t.app, owner, { visibility: 'private' });
    const project = await createProject(t.app, owner, { visibility: 'private' });
    const past = date(t.clock.now() - day);
    const today = date(t.clock.now());
    for (const base of [`/projects/${project.id}`, `/groups/${group.id}`]) {
      for (const expires_at of [past, today]) {
        const add = await t.api('POST', `${base}/members`, {
          token: owner.token,
          body: { user_id: newcomer.user.id, access_level: 30, expires_at },
        });
        assert.equal(add.statusCode, 400, `${base} add ${expires_at}`);
        assert.deepEqual(add.json(), { message: { expires_at: ['must be in the future'] } });
      }
      const added = await t.api('POST', `${base}/members`, { token: owner.token, body: { user_id: newcomer.user.id, access_level: 30 } });
      assert.equal(added.statusCode, 201);
      const update = await t.api('PUT', `${base}/members/${newcomer.user.id}`, {
        token: owner.token,
        body: { access_level: 20, expires_at: past },
      });
      assert.equal(update.statusCode, 400, `${base} update`);
      const body = { name: 'late', scopes: ['read_api'], access_level: 30, expires_at: past };
      const token = await t.api('POST', `${base}/access_tokens`, { token: owner.token, body });
      assert.equal(token.statusCode, 400, `${base} token`);
      assert.equal(token.json().token, undefined);
    }
    const personal = await t.api('POST', '/user/personal_access_tokens', {
      token: owner.token,
      body: { name: 'late', scopes: ['read_api'], expires_at: past },
    });
    assert.equal(personal.statusCode, 400);
  });
});
