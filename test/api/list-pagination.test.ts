import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { registerApp } from '../helpers/oauth.js';
import { enableTracking, envelope, envelopePath, post, sentryAuth, trackedProject } from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** DESIGN.md §5: every list answers these, and `X-Total` counts what the filters let through. */
function assertPage(res: LightMyRequestResponse, expected: { total: number; page: number; perPage: number; length: number }): void {
  assert.equal(res.statusCode, 200, res.body);
  const totalPages = Math.max(1, Math.ceil(expected.total / expected.perPage));
  assert.equal(res.headers['x-total'], String(expected.total));
  assert.equal(res.headers['x-total-pages'], String(totalPages));
  assert.equal(res.headers['x-page'], String(expected.page));
  assert.equal(res.headers['x-per-page'], String(expected.perPage));
  assert.equal(res.headers['x-next-page'], expected.page < totalPages ? String(expected.page + 1) : '');
  assert.equal(res.headers['x-prev-page'], expected.page > 1 ? String(expected.page - 1) : '');
  const last = String(res.headers.link)
    .split(', ')
    .find((link) => link.endsWith('; rel="last"'));
  const lastUrl = new URL(String(/^<([^>]+)>/.exec(last ?? '')?.[1]));
  assert.equal(lastUrl.searchParams.get('page'), String(totalPages));
  assert.equal(lastUrl.searchParams.get('per_page'), String(expected.perPage));
  assert.equal(res.json<unknown[]>().length, expected.length);
}

const ids = (res: LightMyRequestResponse): number[] => res.json<{ id: number }[]>().map((row) => row.id);
const tomorrow = (t: TestApp) => new Date(t.clock.now() + DAY).toISOString().slice(0, 10);

describe('project and group access token lists are paginated, with state judged in the query', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'])));
  after(() => t.close());

  for (const kind of ['projects', 'groups'] as const) {
    it(`${kind}: pages, headers and active/inactive totals (revoked or expired is inactive)`, async () => {
      const id = kind === 'projects' ? (await createProject(t.app, owner)).id : (await createGroup(t.app, owner)).id;
      const base = `/${kind}/${id}/access_tokens`;
      const created: number[] = [];
      for (const name of ['a', 'b', 'c', 'd']) {
        const body = { name, scopes: ['read_api'], ...(name === 'd' ? { expires_at: tomorrow(t) } : {}) };
        const res = await t.api('POST', base, { token: owner.token, body });
        assert.equal(res.statusCode, 201, res.body);
        created.push(res.json().id);
      }
      assert.equal((await t.api('DELETE', `${base}/${created[1]}`, { token: owner.token })).statusCode, 204);
      t.manual?.advance(2 * DAY);

      const first = await t.api('GET', `${base}?per_page=3`, { token: owner.token });
      assertPage(first, { total: 4, page: 1, perPage: 3, length: 3 });
      const second = await t.api('GET', `${base}?per_page=3&page=2`, { token: owner.token });
      assertPage(second, { total: 4, page: 2, perPage: 3, length: 1 });
      assert.deepEqual([...ids(first), ...ids(second)], created, 'oldest first, no overlap');
      assertPage(await t.api('GET', base, { token: owner.token }), { total: 4, page: 1, perPage: 20, length: 4 });

      const active = await t.api('GET', `${base}?state=active&per_page=1&page=2`, { token: owner.token });
      assertPage(active, { total: 2, page: 2, perPage: 1, length: 1 });
      assert.deepEqual(ids(active), [created[2]]);
      assert.match(String(active.headers.link), /state=active/, 'links keep the filter');
      const inactive = await t.api('GET', `${base}?state=inactive`, { token: owner.token });
      assertPage(inactive, { total: 2, page: 1, perPage: 20, length: 2 });
      assert.deepEqual(ids(inactive), [created[1], created[3]], 'the revoked and the expired token');
    });
  }
});

describe('personal and impersonation token lists filter by state before paging', () => {
  let t: TestApp;
  let alice: TestUser;
  before(async () => ({ t, alice } = await appWithUsers(['alice'])));
  after(() => t.close());

  /** Tokens of alice: `live` active, one revoked, one expired (after the clock moves). */
  async function seed(path: string, live: number, token?: string): Promise<{ active: number[]; revoked: number; expired: number }> {
    const post = (name: string, expires?: string) =>
      t.api('POST', path, { ...(token ? { token } : {}), body: { name, scopes: ['api'], ...(expires ? { expires_at: expires } : {}) } });
    const active: number[] = [];
    for (let i = 0; i < live; i += 1) active.push((await post(`live${i}`)).json().id);
    const revoked: number = (await post('revoked')).json().id;
    const expired: number = (await post('expired', tomorrow(t))).json().id;
    return { active, revoked, expired };
  }

  it('GET /personal_access_tokens?state= counts and pages only the matching tokens', async () => {
    const tokens = await seed('/user/personal_access_tokens', 2, alice.token);
    assert.equal((await t.api('DELETE', `/personal_access_tokens/${tokens.revoked}`, { token: alice.token })).statusCode, 204);
    t.manual?.advance(2 * DAY);
    // alice's own token from createUser is active too.
    const all = await t.api('GET', '/personal_access_tokens?per_page=2&page=3', { token: alice.token });
    assertPage(all, { total: 5, page: 3, perPage: 2, length: 1 });
    const active = await t.api('GET', '/personal_access_tokens?state=active&per_page=2&page=2', { token: alice.token });
    assertPage(active, { total: 3, page: 2, perPage: 2, length: 1 });
    assert.deepEqual(ids(active), [tokens.active[1]]);
    const inactive = await t.api('GET', '/personal_access_tokens?state=inactive', { token: alice.token });
    assertPage(inactive, { total: 2, page: 1, perPage: 20, length: 2 });
    assert.deepEqual(ids(inactive), [tokens.revoked, tokens.expired]);
    assert.ok(inactive.json<{ active: boolean }[]>().every((row) => !row.active));
    const byAdmin = await t.api('GET', `/personal_access_tokens?user_id=${alice.user.id}&state=inactive`);
    assertPage(byAdmin, { total: 2, page: 1, perPage: 20, length: 2 });
    const bad = await t.api('GET', '/personal_access_tokens?state=revoked', { token: alice.token });
    assert.equal(bad.statusCode, 400);
  });

  it('GET /users/:user_id/impersonation_tokens?state= has totals and full pages that agree', async () => {
    const path = `/users/${alice.user.id}/impersonation_tokens`;
    const tokens = await seed(path, 3);
    assert.equal((await t.api('DELETE', `${path}/${tokens.revoked}`)).statusCode, 204);
    t.manual?.advance(2 * DAY);
    const first = await t.api('GET', `${path}?state=active&per_page=2`);
    assertPage(first, { total: 3, page: 1, perPage: 2, length: 2 });
    const second = await t.api('GET', `${path}?state=active&per_page=2&page=2`);
    assertPage(second, { total: 3, page: 2, perPage: 2, length: 1 });
    assert.deepEqual([...ids(first), ...ids(second)], tokens.active);
    const inactive = await t.api('GET', `${path}?state=inactive&per_page=1&page=2`);
    assertPage(inactive, { total: 2, page: 2, perPage: 1, length: 1 });
    assert.deepEqual(ids(inactive), [tokens.expired]);
    assertPage(await t.api('GET', `${path}?state=all`), { total: 5, page: 1, perPage: 20, length: 5 });
  });
});

describe('GET /applications is paginated (docs/decisions.md)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('a small instance still gets every application on the first page; per_page and page walk a larger one', async () => {
    const created: number[] = [];
    for (const name of ['one', 'two', 'three']) created.push((await registerApp(t, { name })).id);
    const all = await t.api('GET', '/applications');
    assertPage(all, { total: 3, page: 1, perPage: 20, length: 3 });
    assert.deepEqual(ids(all), created);
    const second = await t.api('GET', '/applications?per_page=2&page=2');
    assertPage(second, { total: 3, page: 2, perPage: 2, length: 1 });
    assert.deepEqual(ids(second), [created[2]]);
    assert.match(String(second.headers.link), /^<http:\/\/basalt\.test\/api\/v4\/applications\?per_page=2&page=1>; rel="prev"/);
  });
});

describe('GET /projects/:id/error_tracking/release_health is paginated', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'])));
  after(() => t.close());

  it('one row per release and environment, most recently active first, paged with the headers', async () => {
    const p = await trackedProject(t, owner);
    const now = t.clock.now();
    // 25 releases, release i last seen i hours ago; r00 also in staging at the same hour.
    const session = (release: string, hoursAgo: number, environment = 'production') => ({
      type: 'session',
      payload: {
        sid: release,
        init: true,
        started: new Date(now - hoursAgo * HOUR).toISOString(),
        status: 'ok',
        attrs: { release, environment },
      },
    });
    const items = Array.from({ length: 25 }, (_, i) => session(`r${String(i).padStart(2, '0')}`, i));
    items.push(session('r00', 0, 'staging'));
    const res = await post(t, envelopePath(p.projectId), envelope({}, items), { 'x-sentry-auth': sentryAuth(p.key) });
    assert.equal(res.statusCode, 200, res.body);

    const url = `/projects/${p.projectId}/error_tracking/release_health`;
    const first = await t.api('GET', url, { token: owner.token });
    assertPage(first, { total: 26, page: 1, perPage: 20, length: 20 });
    const rows = first.json<{ release: string; environment: string }[]>();
    assert.deepEqual(rows.slice(0, 3), [
      { ...rows[0], release: 'r00', environment: 'production' },
      { ...rows[1], release: 'r00', environment: 'staging' },
      { ...rows[2], release: 'r01', environment: 'production' },
    ]);
    const second = await t.api('GET', `${url}?page=2&days=30`, { token: owner.token });
    assertPage(second, { total: 26, page: 2, perPage: 20, length: 6 });
    assert.deepEqual(
      second.json<{ release: string }[]>().map((r) => r.release),
      ['r19', 'r20', 'r21', 'r22', 'r23', 'r24'],
    );
    assert.match(String(second.headers.link), /days=30/, 'links keep the window');
    const lastDay = await t.api('GET', `${url}?days=1&per_page=100`, { token: owner.token });
    assertPage(lastDay, { total: 25, page: 1, perPage: 100, length: 25 });
  });
});

describe('every list bounds its offset, page × per_page (docs/api.md)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('each list of the OpenAPI document answers 400 past offset 50,000 and serves the page at it', async () => {
    const owner = await createUser(t.app);
    const group = await createGroup(t.app, owner);
    const project = await createProject(t.app, owner, { namespaceId: group.id });
    const issue = await t.api('POST', `/projects/${project.id}/issues`, { body: { title: 'Paged' } });
    const snippet = await t.api('POST', '/snippets', { body: { title: 'S', file_name: 'a.txt', content: 'a', visibility: 'private' } });
    const p = await enableTracking(t, project.id, owner.token);
    const event = await post(
      t,
      envelopePath(p.projectId),
      envelope({ event_id: 'a'.repeat(32) }, [{ type: 'event', payload: { message: 'boom' } }]),
      {
        'x-sentry-auth': sentryAuth(p.key),
      },
    );
    assert.equal(event.statusCode, 200, event.body);
    const errorId = (await t.api('GET', `/projects/${project.id}/error_tracking/errors?status=unresolved`)).json<{ id: number }[]>()[0]?.id;
    const values: Record<string, string> = {
      '/projects/{id}': String(project.id),
      '/groups/{id}': String(group.id),
      '/snippets/{id}': String(snippet.json().id),
      '/users/{id}': String(owner.user.id),
      '{user_id}': String(owner.user.id),
      '{issue_iid}': String(issue.json().iid),
      '{error_id}': String(errorId),
    };
    const doc = (await t.api('GET', '/api/v4/openapi.json')).json<{
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
    }>();
    const lists = Object.entries(doc.paths)
      .filter(
        ([path, methods]) => path.startsWith('/api/v4/') && methods.get?.parameters?.some((q) => q.in === 'query' && q.name === 'page'),
      )
      .map(([path]) =>
        Object.entries(values).reduce(
          (url, [pattern, value]) => url.replace(pattern, pattern.replace(/\{\w+\}/, value)),
          path.slice('/api/v4'.length),
        ),
      );
    assert.ok(lists.length >= 30, `only ${lists.length} lists found`);
    for (const url of lists) {
      assert.doesNotMatch(url, /\{/, url);
      const deepest = await t.api('GET', `${url}?per_page=100&page=501`);
      assert.equal(deepest.statusCode, 200, `${url}: ${deepest.body}`);
      for (const query of ['per_page=100&page=502', 'page=2502', 'per_page=1000&page=1000000']) {
        const res = await t.api('GET', `${url}?${query}`);
        assert.equal(res.statusCode, 400, `${url}?${query}: ${res.body}`);
        assert.match(res.json<{ message: string }>().message, /maximum allowed offset of 50000/);
      }
    }
  });
});
