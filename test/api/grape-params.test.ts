// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const OWNER = 50;
const DEVELOPER = 30;

describe('wire conventions of the established API (issue 19)', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => ({ t, alice, bob } = await appWithUsers(['alice', 'bob'])));
  after(() => t.close());

  describe('media type', () => {
    it('every /api/v4 JSON answer, errors included, is exactly application/json', async () => {
      const answers = [
        await t.api('GET', '/user', { token: alice.token }),
        await t.api('POST', '/projects', { token: alice.token, body: { name: 'typed' } }),
        await t.api('GET', '/projects/999999', { token: alice.token }),
        await t.api('GET', '/user', { token: 'bsp_not-a-token' }),
        await t.api('GET', '/projects?per_page=abc', { token: alice.token }),
        await t.api('PATCH', '/user', { token: alice.token }),
        await t.api('GET', '/no/such/route', { token: alice.token }),
      ];
      assert.deepEqual(
        answers.map((res) => res.statusCode),
        [200, 201, 404, 401, 400, 405, 404],
      );
      for (const res of answers) assert.equal(res.headers['content-type'], 'application/json', `${res.statusCode} ${res.body}`);
    });

    it('a rate-limited answer (429) is application/json too', async () => {
      const limited = await createTestApp({ env: { RATE_LIMITS: 'api_authenticated=1/m' } });
      try {
        await limited.api('GET', '/user');
        const res = await limited.api('GET', '/user');
        assert.equal(res.statusCode, 429);
        assert.equal(res.headers['content-type'], 'application/json');
      } finally {
        await limited.close();
      }
    });

    it('OAuth answers keep their own media type', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: 'grant_type=nonsense' });
      assert.equal(res.statusCode, 400);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.equal(res.json().error, 'unsupported_grant_type');
    });
  });

  describe('booleans', () => {
    it('every spelling Grape accepts, in the query string: owned=True lists only the caller’s projects', async () => {
      const mine = await createProject(t.app, alice, { visibility: 'public' });
      const theirs = await createProject(t.app, bob, { visibility: 'public' });
      for (const spelling of ['True', 'true', 'TRUE', 't', '1', 'yes', 'on', 'Y']) {
        const res = await t.api('GET', `/projects?owned=${spelling}&per_page=100`, { token: alice.token });
        assert.equal(res.statusCode, 200, res.body);
        const ids = res.json<{ id: number }[]>().map((p) => p.id);
        assert.ok(ids.includes(mine.id), spelling);
        assert.ok(!ids.includes(theirs.id), spelling);
      }
      const unfiltered = await t.api('GET', '/projects?owned=False&per_page=100', { token: alice.token });
      assert.ok(unfiltered.json<{ id: number }[]>().some((p) => p.id === theirs.id));
      const bad = await t.api('GET', '/projects?owned=maybe', { token: alice.token });
      assert.equal(bad.statusCode, 400);
      assert.deepEqual(bad.json(), { message: { owned: ['is invalid'] } });
    });

    it('the same spellings in a form body and as JSON strings', async () => {
      const form = await t.api('POST', '/projects', {
        token: alice.token,
        headers: FORM,
        body: 'name=formbool&initialize_with_readme=False',
      });
      assert.equal(form.statusCode, 201, form.body);
      const json = await t.api('POST', '/projects', { token: alice.token, body: { name: 'jsonbool', initialize_with_readme: 'No' } });
      assert.equal(json.statusCode, 201, json.body);
      const issue = await t.api('POST', `/projects/${json.json().id}/issues`, {
        token: alice.token,
        body: { title: 'x', confidential: 'True' },
      });
      assert.equal(issue.statusCode, 201, issue.body);
      assert.equal(issue.json().confidential, true);
    });
  });

  describe('arrays, hashes and strings for integers', () => {
    it('scopes[]=… (Rack form, encoded or not), repeated keys and JSON arrays all create a token', async () => {
      const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
      const bodies: [Record<string, string>, string | object][] = [
        [FORM, `name=rack&scopes[]=api&scopes[]=read_user&expires_at=${expiry}`],
        [FORM, `name=encoded&scopes%5B%5D=api&scopes%5B%5D=read_user&expires_at=${expiry}`],
        [FORM, `name=repeated&scopes=api&scopes=read_user&expires_at=${expiry}`],
        [{}, { name: 'json', scopes: ['api', 'read_user'], expires_at: expiry }],
      ];
      for (const [headers, body] of bodies) {
        const res = await t.api('POST', '/user/personal_access_tokens', { token: alice.token, headers, body });
        assert.equal(res.statusCode, 201, res.body);
        assert.deepEqual(res.json().scopes, ['api', 'read_user']);
      }
      const query = await t.api('GET', '/projects?per_page=5&iids[]=1', { token: alice.token });
      assert.equal(query.statusCode, 200);
    });

    it('arrays of hashes (files[][file_path]=…) as POST /snippets takes them', async () => {
      const body = 'title=files&visibility=private&files[][file_path]=a.txt&files[][content]=first+line';
      const res = await t.api('POST', '/snippets', { token: alice.token, headers: FORM, body });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().file_name, 'a.txt');
      const row = await t.app.platform.db
        .selectFrom('snippets')
        .select('content')
        .where('id', '=', res.json().id)
        .executeTakeFirstOrThrow();
      assert.equal(row.content, 'first line');
    });

    it('a key that is a hash and an array at once is a 400, not a crash', async () => {
      const res = await t.api('POST', '/snippets', { token: alice.token, headers: FORM, body: 'title=x&files[a]=1&files[]=2' });
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers['content-type'], 'application/json');
    });

    it('integers given as strings in JSON', async () => {
      const group = await createGroup(t.app, alice);
      const res = await t.api('POST', '/projects', { token: alice.token, body: { name: 'strint', namespace_id: String(group.id) } });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().namespace.id, group.id);
    });
  });

  describe('list filters are applied', () => {
    it('membership=true lists what the caller reaches through membership, owned=true what they own', async () => {
      const carol = await createUser(t.app);
      const group = await createGroup(t.app, bob, { visibility: 'public' });
      const inGroup = await createProject(t.app, bob, { namespaceId: group.id, visibility: 'public' });
      await addMember(t.app, 'namespace', group.id, carol, DEVELOPER);
      const own = await createProject(t.app, carol);
      const stranger = await createProject(t.app, bob, { visibility: 'public' });
      const ids = async (query: string) =>
        (await t.api('GET', `/projects?${query}&per_page=100`, { token: carol.token }))
          .json<{ id: number }[]>()
          .map((p) => p.id)
          .sort();
      assert.deepEqual(await ids('membership=true'), [inGroup.id, own.id].sort());
      assert.deepEqual(await ids('owned=true'), [own.id]);
      assert.ok((await ids('membership=false')).includes(stranger.id));
      const ownedGroup = await createGroup(t.app, bob);
      const inOwnedGroup = await createProject(t.app, bob, { namespaceId: ownedGroup.id });
      await addMember(t.app, 'namespace', ownedGroup.id, carol, OWNER);
      assert.deepEqual(await ids('owned=true'), [inOwnedGroup.id, own.id].sort());
      const inGroupOwned = await t.api('GET', `/groups/${group.id}/projects?owned=true`, { token: alice.token });
      assert.deepEqual(inGroupOwned.json(), []);
      const anonymous = await t.api('GET', '/projects?owned=true', { token: null });
      assert.deepEqual(anonymous.json(), []);
    });

    it('simple=true answers the basic fields only', async () => {
      await createProject(t.app, alice);
      const res = await t.api('GET', '/projects?owned=true&simple=true', { token: alice.token });
      const first = res.json<Record<string, unknown>[]>()[0];
      assert.ok(first);
      assert.ok('path_with_namespace' in first);
      assert.ok(!('visibility' in first));
      assert.ok(!('open_issues_count' in first));
    });

    it('groups: owned=true, all_available=false and the subgroup filters', async () => {
      const dave = await createUser(t.app);
      const owned = await createGroup(t.app, dave, { visibility: 'public' });
      const joined = await createGroup(t.app, bob, { visibility: 'public' });
      await addMember(t.app, 'namespace', joined.id, dave, DEVELOPER);
      const other = await createGroup(t.app, bob, { visibility: 'public' });
      const ids = async (url: string) =>
        (await t.api('GET', url, { token: dave.token }))
          .json<{ id: number }[]>()
          .map((g) => g.id)
          .sort();
      assert.deepEqual(await ids('/groups?owned=True&per_page=100'), [owned.id]);
      assert.deepEqual(await ids('/groups?all_available=false&per_page=100'), [owned.id, joined.id].sort());
      assert.ok((await ids('/groups?per_page=100')).includes(other.id));
      const child = await createGroup(t.app, dave, { parentId: owned.id, path: `kid${owned.id}` });
      await createGroup(t.app, dave, { parentId: owned.id, path: `other${owned.id}` });
      assert.deepEqual(await ids(`/groups/${owned.id}/subgroups?search=kid`), [child.id]);
    });
  });

  describe('alternative attributes', () => {
    it('POST /projects with neither name nor path names both, as a string (JSON and form)', async () => {
      const message = 'name, path are missing, at least one parameter must be provided';
      const json = await t.api('POST', '/projects', { token: alice.token, body: { visibility: 'private' } });
      assert.equal(json.statusCode, 400);
      assert.deepEqual(json.json(), { message });
      const form = await t.api('POST', '/projects', { token: alice.token, headers: FORM, body: 'visibility=private' });
      assert.deepEqual(form.json(), { message });
      const bare = await t.api('POST', '/projects', { token: alice.token });
      assert.deepEqual(bare.json(), { message });
      const byPath = await t.api('POST', '/projects', { token: alice.token, body: { path: 'only-path' } });
      assert.equal(byPath.statusCode, 201, byPath.body);
    });

    it('an update with none of its attributes is refused the same way', async () => {
      const project = await createProject(t.app, alice);
      const res = await t.api('PUT', `/projects/${project.id}`, { token: alice.token, body: {} });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), {
        message: 'name, path, visibility, description, default_branch are missing, at least one parameter must be provided',
      });
      const issue = await t.api('POST', `/projects/${project.id}/issues`, { token: alice.token, body: { title: 'x' } });
      const empty = await t.api('PUT', `/projects/${project.id}/issues/${issue.json().iid}`, { token: alice.token, body: {} });
      assert.equal(empty.statusCode, 400);
      assert.match(
        empty.json().message,
        /^title, description, state_event, issue_type, confidential, assignee_id, assignee_ids, due_date are missing, at least one/,
      );
    });
  });
});
