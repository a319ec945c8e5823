// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { createIntegration, notify } from '../helpers/alerts.js';
import { enableTracking, envelope, envelopePath, hex32, sentryAuth } from '../helpers/sentry.js';

/**
 * Authorization matrix (issue 10, deliverable 2): every REST route of the OpenAPI document
 * that takes a project or group id, called by ten kinds of caller on a private and a public
 * container. The table below is the contract: the least role a route needs, and whether
 * anyone who can see a public container may use it. No caller may get more than its row
 * says; what a caller cannot see answers 404, what it can see but may not do 403, a revoked
 * token 401. About 1,700 injected requests (a few seconds).
 */

/** `author`: only whoever wrote the thing (the fixtures are written by the owner) and admins. */
type Min = 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner' | 'admin' | 'author';
interface Rule {
  min: Min;
  /** On a public container, signed-in non-members may use it too ('signed_in'), or anyone ('anyone'). */
  publicUse?: 'signed_in' | 'anyone';
}

const R = (min: Min, publicUse?: Rule['publicUse']): Rule => ({ min, ...(publicUse ? { publicUse } : {}) });
const READ = R('guest', 'anyone');

export const EXPECTED: Record<string, Rule> = {
  // groups
  'GET /groups/{id}': READ,
  'PUT /groups/{id}': R('owner'),
  'DELETE /groups/{id}': R('owner'),
  'GET /groups/{id}/subgroups': READ,
  'GET /groups/{id}/projects': READ,
  'GET /groups/{id}/members': READ,
  'GET /groups/{id}/members/all': READ,
  'GET /groups/{id}/members/{user_id}': READ,
  'POST /groups/{id}/members': R('owner'),
  'PUT /groups/{id}/members/{user_id}': R('owner'),
  'DELETE /groups/{id}/members/{user_id}': R('owner'),
  // Group access tokens are for Owners only, as in the established product (issue 18).
  'GET /groups/{id}/access_tokens': R('owner'),
  'POST /groups/{id}/access_tokens': R('owner'),
  'GET /groups/{id}/access_tokens/{token_id}': R('owner'),
  'POST /groups/{id}/access_tokens/{token_id}/rotate': R('owner'),
  'DELETE /groups/{id}/access_tokens/{token_id}': R('owner'),
  'GET /groups/{id}/notification_settings': R('guest', 'signed_in'),
  'PUT /groups/{id}/notification_settings': R('guest', 'signed_in'),
  'GET /groups/{id}/repository_storage_moves': R('admin'),
  'POST /groups/{id}/repository_storage_moves': R('admin'),
  'GET /groups/{id}/repository_storage_moves/{repository_storage_move_id}': R('admin'),
  // Group webhooks are for Owners, as in the established product.
  'GET /groups/{id}/hooks': R('owner'),
  'POST /groups/{id}/hooks': R('owner'),
  'GET /groups/{id}/hooks/{hook_id}': R('owner'),
  'PUT /groups/{id}/hooks/{hook_id}': R('owner'),
  'DELETE /groups/{id}/hooks/{hook_id}': R('owner'),
  'POST /groups/{id}/hooks/{hook_id}/test/{trigger}': R('owner'),
  // Audit events: the group's or project's Maintainers and Owners (issue 24).
  'GET /groups/{id}/audit_events': R('maintainer'),
  'GET /groups/{id}/audit_events/{audit_event_id}': R('maintainer'),
  // projects
  'GET /projects/{id}': READ,
  'PUT /projects/{id}': R('maintainer'),
  'DELETE /projects/{id}': R('owner'),
  'GET /projects/{id}/events': READ,
  'GET /projects/{id}/members': READ,
  'GET /projects/{id}/members/all': READ,
  'GET /projects/{id}/members/{user_id}': READ,
  'POST /projects/{id}/members': R('maintainer'),
  'PUT /projects/{id}/members/{user_id}': R('maintainer'),
  'DELETE /projects/{id}/members/{user_id}': R('maintainer'),
  'GET /projects/{id}/access_tokens': R('maintainer'),
  'POST /projects/{id}/access_tokens': R('maintainer'),
  'GET /projects/{id}/access_tokens/{token_id}': R('maintainer'),
  'POST /projects/{id}/access_tokens/{token_id}/rotate': R('maintainer'),
  'DELETE /projects/{id}/access_tokens/{token_id}': R('maintainer'),
  'GET /projects/{id}/notification_settings': R('guest', 'signed_in'),
  'PUT /projects/{id}/notification_settings': R('guest', 'signed_in'),
  'GET /projects/{id}/repository_storage_moves': R('admin'),
  'POST /projects/{id}/repository_storage_moves': R('admin'),
  'GET /projects/{id}/repository_storage_moves/{repository_storage_move_id}': R('admin'),
  // issues and notes: anyone who sees the project reads and opens issues and comments;
  // editing someone else's issue needs Reporter, deleting it Owner.
  'GET /projects/{id}/issues': READ,
  'POST /projects/{id}/issues': R('guest', 'signed_in'),
  'GET /projects/{id}/issues/{issue_iid}': READ,
  'PUT /projects/{id}/issues/{issue_iid}': R('reporter'),
  'DELETE /projects/{id}/issues/{issue_iid}': R('owner'),
  'GET /projects/{id}/issues/{issue_iid}/notes': READ,
  'POST /projects/{id}/issues/{issue_iid}/notes': R('guest', 'signed_in'),
  'GET /projects/{id}/issues/{issue_iid}/notes/{note_id}': READ,
  'PUT /projects/{id}/issues/{issue_iid}/notes/{note_id}': R('author'),
  'DELETE /projects/{id}/issues/{issue_iid}/notes/{note_id}': R('maintainer'),
  // snippets
  'GET /projects/{id}/snippets': READ,
  'POST /projects/{id}/snippets': R('reporter'),
  'GET /projects/{id}/snippets/{snippet_id}': READ,
  // jobs
  'POST /projects/{id}/jobs': R('maintainer'),
  'GET /projects/{id}/jobs/{job_id}': R('developer'),
  'PUT /projects/{id}/jobs/{job_id}': R('maintainer'),
  // alerts
  'GET /projects/{id}/alert_management/alerts': R('developer'),
  'GET /projects/{id}/alert_management/alerts/{alert_iid}': R('developer'),
  'PUT /projects/{id}/alert_management/alerts/{alert_iid}': R('developer'),
  'GET /projects/{id}/alert_management/integrations': R('maintainer'),
  'POST /projects/{id}/alert_management/integrations': R('maintainer'),
  'GET /projects/{id}/alert_management/integrations/{integration_id}': R('maintainer'),
  'PUT /projects/{id}/alert_management/integrations/{integration_id}': R('maintainer'),
  'DELETE /projects/{id}/alert_management/integrations/{integration_id}': R('maintainer'),
  'POST /projects/{id}/alert_management/integrations/{integration_id}/reset_token': R('maintainer'),
  'POST /projects/{id}/alert_management/integrations/{integration_id}/test': R('developer'),
  'GET /projects/{id}/alert_management/settings': R('maintainer'),
  'PUT /projects/{id}/alert_management/settings': R('maintainer'),
  // webhooks
  'GET /projects/{id}/audit_events': R('maintainer'),
  'GET /projects/{id}/audit_events/{audit_event_id}': R('maintainer'),
  'GET /projects/{id}/hooks': R('maintainer'),
  'POST /projects/{id}/hooks': R('maintainer'),
  'GET /projects/{id}/hooks/{hook_id}': R('maintainer'),
  'PUT /projects/{id}/hooks/{hook_id}': R('maintainer'),
  'DELETE /projects/{id}/hooks/{hook_id}': R('maintainer'),
  'POST /projects/{id}/hooks/{hook_id}/test/{trigger}': R('maintainer'),
  // error tracking
  'GET /projects/{id}/error_tracking/settings': R('maintainer'),
  'PUT /projects/{id}/error_tracking/settings': R('maintainer'),
  'PATCH /projects/{id}/error_tracking/settings': R('maintainer'),
  'GET /projects/{id}/error_tracking/client_keys': R('maintainer'),
  'POST /projects/{id}/error_tracking/client_keys': R('maintainer'),
  'DELETE /projects/{id}/error_tracking/client_keys/{key_id}': R('maintainer'),
  'GET /projects/{id}/error_tracking/errors': R('reporter'),
  'GET /projects/{id}/error_tracking/errors/{error_id}': R('reporter'),
  'PUT /projects/{id}/error_tracking/errors/{error_id}': R('developer'),
  'GET /projects/{id}/error_tracking/errors/{error_id}/events': R('reporter'),
  'POST /projects/{id}/error_tracking/errors/{error_id}/issue': R('developer'),
  'GET /projects/{id}/error_tracking/release_health': R('reporter'),
};

/** Request bodies that make each write a plausible, harmless request. */
const BODIES: Record<string, unknown> = {
  'PUT /groups/{id}': { description: 'matrix' },
  'POST /groups/{id}/members': { user_id: '{newcomer}', access_level: 10 },
  'PUT /groups/{id}/members/{user_id}': { access_level: 20 },
  'POST /groups/{id}/access_tokens': { name: 'matrix', scopes: ['read_api'], access_level: 10 },
  'PUT /groups/{id}/notification_settings': { level: 'watch' },
  'POST /groups/{id}/repository_storage_moves': {},
  'PUT /projects/{id}': { description: 'matrix' },
  'POST /projects/{id}/members': { user_id: '{newcomer}', access_level: 10 },
  'PUT /projects/{id}/members/{user_id}': { access_level: 20 },
  'POST /projects/{id}/access_tokens': { name: 'matrix', scopes: ['read_api'], access_level: 10 },
  'PUT /projects/{id}/notification_settings': { level: 'watch' },
  'POST /projects/{id}/repository_storage_moves': {},
  'POST /projects/{id}/issues': { title: 'matrix issue' },
  'PUT /projects/{id}/issues/{issue_iid}': { description: 'matrix' },
  'POST /projects/{id}/issues/{issue_iid}/notes': { body: 'matrix note' },
  'PUT /projects/{id}/issues/{issue_iid}/notes/{note_id}': { body: 'matrix edit' },
  'POST /projects/{id}/snippets': { title: 'matrix', file_name: 'a.txt', content: 'x', visibility: 'private' },
  'POST /projects/{id}/jobs': { name: 'matrix' },
  'PUT /projects/{id}/jobs/{job_id}': { status: 'success' },
  'PUT /projects/{id}/alert_management/alerts/{alert_iid}': { status: 'acknowledged' },
  'POST /projects/{id}/alert_management/integrations': { name: 'matrix', type: 'http' },
  'PUT /projects/{id}/alert_management/integrations/{integration_id}': { name: 'matrix' },
  'POST /projects/{id}/alert_management/integrations/{integration_id}/reset_token': {},
  'POST /projects/{id}/alert_management/integrations/{integration_id}/test': {},
  'PUT /projects/{id}/alert_management/settings': { create_issue: false },
  // A public address, so no name is resolved; the fixture hooks want pushes only, so nothing is sent.
  'POST /projects/{id}/hooks': { url: 'http://203.0.113.10/matrix' },
  'PUT /projects/{id}/hooks/{hook_id}': { name: 'matrix' },
  'POST /groups/{id}/hooks': { url: 'http://203.0.113.10/matrix' },
  'PUT /groups/{id}/hooks/{hook_id}': { name: 'matrix' },
  'PUT /projects/{id}/error_tracking/settings': { active: true, integrated: true },
  'PATCH /projects/{id}/error_tracking/settings': { active: true, integrated: true },
  'POST /projects/{id}/error_tracking/client_keys': {},
  'PUT /projects/{id}/error_tracking/errors/{error_id}': { status: 'resolved' },
  'POST /projects/{id}/error_tracking/errors/{error_id}/issue': {},
};

const LEVEL: Record<Exclude<Min, 'admin' | 'author'>, number> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 };
const CALLERS = ['revoked', 'anonymous', 'other', 'bot', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
type Caller = (typeof CALLERS)[number];
const BOT_LEVEL = 30;

interface Container {
  visibility: 'private' | 'public';
  groupId: number;
  projectId: number;
  /** Values for the path parameters other than `{id}`. */
  project: Record<string, number | string>;
  group: Record<string, number | string>;
  botToken: string;
  newcomer: { project: number; group: number };
}

/** What the table allows this caller on this container: true, or the refusal status(es). */
function allowed(rule: Rule, caller: Caller, visibility: 'private' | 'public', memberLevel: number): true | number[] {
  if (caller === 'revoked') return [401];
  if (caller === 'admin') return true;
  const isPublic = visibility === 'public';
  if (caller === 'anonymous') {
    if (isPublic && rule.publicUse === 'anyone') return true;
    return isPublic ? [401, 403] : [401, 404];
  }
  if (rule.min === 'admin') return [403, ...(isPublic || memberLevel > 0 ? [] : [404])];
  if (rule.min === 'author') return caller === 'owner' ? true : memberLevel === 0 && !isPublic ? [404] : [403];
  if (memberLevel >= LEVEL[rule.min]) return true;
  if (isPublic && rule.publicUse) return true;
  if (memberLevel === 0 && !isPublic) return [404];
  return [403];
}

describe('authorization matrix: every project and group route, every kind of caller', () => {
  let t: TestApp;
  const tokens = {} as Record<Caller, string | null>;
  const users = {} as Record<Exclude<Caller, 'anonymous' | 'revoked' | 'bot'>, TestUser>;
  const containers: Container[] = [];
  let routes: { method: string; path: string }[] = [];

  async function world(visibility: 'private' | 'public'): Promise<Container> {
    const group = await createGroup(t.app, users.owner, { visibility });
    const project = await createProject(t.app, users.owner, { namespaceId: group.id, visibility });
    for (const role of ['guest', 'reporter', 'developer', 'maintainer'] as const) {
      await addMember(t.app, 'namespace', group.id, users[role], LEVEL[role]);
    }
    // Members the member routes act on, and users the add routes add.
    const projectTarget = await createUser(t.app);
    const groupTarget = await createUser(t.app);
    await addMember(t.app, 'project', project.id, projectTarget, 10);
    await addMember(t.app, 'namespace', group.id, groupTarget, 10);
    const newcomerP = await createUser(t.app);
    const newcomerG = await createUser(t.app);

    const ok = (res: LightMyRequestResponse, status: number) => assert.equal(res.statusCode, status, res.body);
    const bot = await t.api('POST', `/projects/${project.id}/access_tokens`, {
      body: { name: 'bot', scopes: ['api'], access_level: BOT_LEVEL },
    });
    ok(bot, 201);
    const projectToken = await t.api('POST', `/projects/${project.id}/access_tokens`, { body: { name: 'target', scopes: ['read_api'] } });
    ok(projectToken, 201);
    const groupToken = await t.api('POST', `/groups/${group.id}/access_tokens`, { body: { name: 'target', scopes: ['read_api'] } });
    ok(groupToken, 201);
    const issue = await t.api('POST', `/projects/${project.id}/issues`, { token: users.owner.token, body: { title: 'fixture' } });
    ok(issue, 201);
    const note = await t.api('POST', `/projects/${project.id}/issues/${issue.json().iid}/notes`, {
      token: users.owner.token,
      body: { body: 'fixture' },
    });
    ok(note, 201);
    const snippet = await t.api('POST', `/projects/${project.id}/snippets`, {
      token: users.owner.token,
      body: { title: 'fixture', file_name: 'a.txt', content: 'x', visibility },
    });
    ok(snippet, 201);
    const job = await t.api('POST', `/projects/${project.id}/jobs`, { token: users.owner.token, body: { name: 'fixture' } });
    ok(job, 201);
    const integration = await createIntegration(t, project.id, { name: 'fixture', type: 'http', active: true });
    const alert = await notify(t, integration.url, { title: 'fixture alert' }, { key: integration.token });
    ok(alert, 200);
    const tracked = await enableTracking(t, project.id);
    const id = hex32(Date.now() + containers.length);
    const event = await t.app.inject({
      method: 'POST',
      url: envelopePath(project.id),
      headers: { 'x-sentry-auth': sentryAuth(tracked.key) },
      payload: envelope({ event_id: id }, [{ type: 'event', payload: { event_id: id, message: 'fixture', level: 'error' } }]),
    });
    ok(event, 200);
    const errors = await t.api('GET', `/projects/${project.id}/error_tracking/errors`);
    const projectHook = await t.api('POST', `/projects/${project.id}/hooks`, { body: { url: 'http://203.0.113.10/fixture' } });
    ok(projectHook, 201);
    const groupHook = await t.api('POST', `/groups/${group.id}/hooks`, { body: { url: 'http://203.0.113.10/fixture' } });
    ok(groupHook, 201);
    // The fixtures above were audited (the access tokens): one event of each container.
    const projectEvents = await t.api('GET', `/projects/${project.id}/audit_events`);
    ok(projectEvents, 200);
    const groupEvents = await t.api('GET', `/groups/${group.id}/audit_events`);
    ok(groupEvents, 200);
    return {
      visibility,
      groupId: group.id,
      projectId: project.id,
      botToken: bot.json().token,
      newcomer: { project: newcomerP.user.id, group: newcomerG.user.id },
      project: {
        user_id: projectTarget.user.id,
        token_id: projectToken.json().id,
        issue_iid: issue.json().iid,
        note_id: note.json().id,
        snippet_id: snippet.json().id,
        job_id: job.json().id,
        alert_iid: alert.json()[0].iid,
        integration_id: integration.id,
        key_id: tracked.keyId,
        error_id: errors.json()[0].id,
        repository_storage_move_id: 999999,
        hook_id: projectHook.json().id,
        audit_event_id: projectEvents.json()[0].id,
        // A test of a trigger the fixtures have nothing for: answered at once (400), no delivery leaves.
        trigger: 'confidential_note_events',
      },
      group: {
        user_id: groupTarget.user.id,
        token_id: groupToken.json().id,
        repository_storage_move_id: 999999,
        hook_id: groupHook.json().id,
        audit_event_id: groupEvents.json()[0].id,
        trigger: 'confidential_note_events',
      },
    };
  }

  before(async () => {
    t = await createTestApp();
    for (const role of ['owner', 'guest', 'reporter', 'developer', 'maintainer', 'other'] as const) users[role] = await createUser(t.app);
    users.admin = await createUser(t.app, { admin: true });
    const revoked = await createUser(t.app);
    const pat = await t.api('GET', '/personal_access_tokens', { token: revoked.token });
    assert.equal((await t.api('DELETE', `/personal_access_tokens/${pat.json()[0].id}`, { token: revoked.token })).statusCode, 204);
    containers.push(await world('private'), await world('public'));
    for (const caller of CALLERS) {
      if (caller === 'anonymous') tokens[caller] = null;
      else if (caller === 'revoked') tokens[caller] = revoked.token;
      else if (caller !== 'bot') tokens[caller] = users[caller].token;
    }
    const doc = (await t.api('GET', '/api/v4/openapi.json')).json<{ paths: Record<string, Record<string, unknown>> }>();
    routes = Object.entries(doc.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })))
      .filter((r) => /^\/api\/v4\/(projects|groups)\/\{id\}/.test(r.path))
      .map((r) => ({ method: r.method, path: r.path.slice('/api/v4'.length) }));
  });
  after(() => t.close());

  it('the table names every such route of the OpenAPI document, and nothing else', () => {
    const documented = routes.map((r) => `${r.method} ${r.path}`).sort();
    assert.deepEqual(documented, Object.keys(EXPECTED).sort());
  });

  it('no caller gets more (or less) than its row says', async () => {
    // Writes first, deletions last (deepest first, the containers themselves at the very end),
    // so a successful DELETE never removes what a later row needs.
    const order = (r: { method: string; path: string }) =>
      r.method !== 'DELETE'
        ? 0
        : /^\/(projects|groups)\/\{id\}$/.test(r.path)
          ? 100 + (r.path.startsWith('/projects') ? 0 : 1)
          : 50 - r.path.split('/').length;
    const sorted = [...routes].sort((a, b) => order(a) - order(b));
    const problems: string[] = [];
    let requests = 0;
    const tally = new Map<number, number>();
    for (const route of sorted) {
      const key = `${route.method} ${route.path}`;
      const rule = EXPECTED[key];
      if (!rule) continue;
      const isGroup = route.path.startsWith('/groups');
      for (const container of containers) {
        const params = isGroup ? container.group : container.project;
        const url = route.path
          .replace('{id}', String(isGroup ? container.groupId : container.projectId))
          .replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? 999999));
        const bodyTemplate = BODIES[key];
        const body =
          bodyTemplate === undefined
            ? route.method === 'GET' || route.method === 'DELETE'
              ? undefined
              : {}
            : JSON.parse(
                JSON.stringify(bodyTemplate).replace(
                  '"{newcomer}"',
                  String(isGroup ? container.newcomer.group : container.newcomer.project),
                ),
              );
        let containerGone = false;
        for (const caller of CALLERS) {
          const memberLevel = caller === 'bot' ? (isGroup ? 0 : BOT_LEVEL) : caller in LEVEL ? LEVEL[caller as keyof typeof LEVEL] : 0;
          const expected = allowed(rule, caller, container.visibility, memberLevel);
          const token = caller === 'bot' ? container.botToken : tokens[caller];
          const res = await t.api(route.method, url, { token, ...(body !== undefined ? { body } : {}) });
          requests += 1;
          tally.set(res.statusCode, (tally.get(res.statusCode) ?? 0) + 1);
          const message = (() => {
            try {
              return JSON.stringify(res.json().message ?? res.json().error);
            } catch {
              return res.body.slice(0, 80);
            }
          })();
          const containerNotFound = res.statusCode === 404 && /"404 (Project|Group) Not Found"/.test(message);
          const refused = res.statusCode === 401 || res.statusCode === 403 || containerNotFound;
          const where = `${key} [${container.visibility}] as ${caller}: ${res.statusCode} ${message}`;
          if (expected === true) {
            if (refused && !(containerGone && containerNotFound)) problems.push(`${where} (expected allowed)`);
            if (res.statusCode >= 500) problems.push(`${where} (5xx)`);
            if (res.statusCode < 300 && /^\/(projects|groups)\/\{id\}$/.test(route.path) && route.method === 'DELETE') containerGone = true;
          } else if (!expected.includes(res.statusCode) || (res.statusCode === 404 && !containerNotFound)) {
            problems.push(`${where} (expected ${expected.join(' or ')})`);
          }
        }
      }
    }
    assert.ok(requests > 1000 && requests < 2500, `${requests} requests`);
    // Both sides of the table were exercised: refusals of each kind, and permitted calls.
    for (const status of [401, 403, 404]) assert.ok((tally.get(status) ?? 0) > 50, `${status} answered ${tally.get(status) ?? 0} times`);
    assert.ok([...tally].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0) > 300, JSON.stringify([...tally]));
    assert.deepEqual(problems, []);
  });
});
