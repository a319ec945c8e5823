import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

interface AuditEvent {
  id: number;
  author_id: number;
  entity_id: number;
  entity_type: string;
  event_name: string;
  details: Record<string, unknown>;
  created_at: string;
}

describe('audit events', () => {
  let t: TestApp;
  let owner: TestUser;
  let maintainer: TestUser;
  let developer: TestUser;
  let outsider: TestUser;
  let projectId: number;
  let otherProjectId: number;
  let groupId: number;

  /** Every event of the instance (as root), newest first. */
  const all = async (query: Record<string, string> = {}): Promise<AuditEvent[]> => {
    const res = await t.api('GET', '/audit_events', { query: { per_page: '100', ...query } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<AuditEvent[]>();
  };
  /** The events named `eventName` whose target is `targetId` (created after `since`). */
  const named = async (eventName: string, targetId?: number) =>
    (await all()).filter((e) => e.event_name === eventName && (targetId === undefined || e.details.target_id === targetId));

  before(async () => {
    ({ t, owner, maintainer, developer, outsider } = await appWithUsers(['owner', 'maintainer', 'developer', 'outsider']));
    groupId = (await createGroup(t.app, owner)).id;
    projectId = (await createProject(t.app, owner, { namespaceId: groupId, visibility: 'private' })).id;
    otherProjectId = (await createProject(t.app, owner, { visibility: 'private' })).id;
    await addMember(t.app, 'project', otherProjectId, maintainer, 40);
  });
  after(() => t.close());

  it('records a personal token created, rotated and revoked, once each, with its author and entity, and never its secret', async () => {
    const created = await t.api('POST', '/user/personal_access_tokens', {
      token: owner.token,
      body: { name: 'audited', scopes: ['read_api'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const { id, token } = created.json<{ id: number; token: string }>();
    const [event, ...more] = await named('personal_access_token_created', id);
    assert.ok(event, 'the creation is recorded');
    assert.equal(more.length, 0, 'once');
    assert.equal(event.author_id, owner.user.id);
    assert.equal(event.entity_type, 'User');
    assert.equal(event.entity_id, owner.user.id);
    assert.equal(event.details.author_name, owner.user.username);
    assert.equal(event.details.entity_path, owner.user.username);
    assert.equal(event.details.target_details, 'audited');
    assert.deepEqual(event.details.scopes, ['read_api']);

    const rotated = await t.api('POST', `/personal_access_tokens/${id}/rotate`, { token: owner.token });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const next = rotated.json<{ id: number; token: string }>();
    const rotations = await named('personal_access_token_rotated', next.id);
    assert.equal(rotations.length, 1);
    assert.equal(rotations[0]?.details.previous_token_id, id);
    assert.equal((await named('personal_access_token_revoked', id)).length, 0, 'a rotation is one event, not a revocation too');
    assert.equal((await named('personal_access_token_created', next.id)).length, 0);

    assert.equal((await t.api('DELETE', `/personal_access_tokens/${next.id}`, { token: owner.token })).statusCode, 204);
    const revoked = await named('personal_access_token_revoked', next.id);
    assert.equal(revoked.length, 1);
    assert.equal(revoked[0]?.author_id, owner.user.id);

    // No secret anywhere in the trail: neither token, nor its digest's source.
    const rows = await t.database.handle.db.selectFrom('audit_events').selectAll().execute();
    const text = JSON.stringify(rows);
    assert.ok(!text.includes(token) && !text.includes(next.token), 'no token value is stored');
    assert.ok(!text.includes('password-123'), 'no password is stored');
  });

  it('tokens created at once (one shared commit on SQLite) are each recorded once (on SQLite in the order they were recorded)', async () => {
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.api('POST', '/user/personal_access_tokens', { token: owner.token, body: { name: `at-once-${i}`, scopes: ['read_api'] } }),
      ),
    );
    const ids = created.map((res) => (assert.equal(res.statusCode, 201, res.body), res.json<{ id: number }>().id));
    const events = (await named('personal_access_token_created')).filter((e) => ids.includes(e.details.target_id as number));
    assert.equal(events.length, 6, 'one event per token');
    assert.deepEqual(new Set(events.map((e) => e.details.target_id)), new Set(ids));
    // In one shared commit (SQLite) the later token's event has the higher id; PostgreSQL's
    // concurrent transactions take the two sequences in any order.
    if (t.app.platform.database.dialect !== 'sqlite') return;
    const byToken = [...events].sort((a, b) => (a.details.target_id as number) - (b.details.target_id as number));
    assert.deepEqual(
      byToken.map((e) => e.id),
      [...byToken.map((e) => e.id)].sort((a, b) => a - b),
    );
    for (const event of events) assert.equal(event.author_id, owner.user.id);
  });

  it('records project access tokens under the project, and impersonation tokens by the administrator', async () => {
    const created = await t.api('POST', `/projects/${projectId}/access_tokens`, {
      token: owner.token,
      body: { name: 'ci', scopes: ['api'] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const tokenId = created.json<{ id: number }>().id;
    const [event, ...more] = await named('project_access_token_created', tokenId);
    assert.ok(event);
    assert.equal(more.length, 0);
    assert.equal(event.entity_type, 'Project');
    assert.equal(event.entity_id, projectId);
    assert.equal(event.author_id, owner.user.id);
    assert.equal((await named('member_created')).filter((e) => e.entity_id === projectId && e.details.target_details === null).length, 0);
    assert.equal((await t.api('DELETE', `/projects/${projectId}/access_tokens/${tokenId}`, { token: owner.token })).statusCode, 204);
    assert.equal((await named('project_access_token_revoked', tokenId)).length, 1);
    assert.equal((await named('member_destroyed', created.json<{ user_id: number }>().user_id)).length, 0, 'the bot leaves with its token');

    const impersonation = await t.api('POST', `/users/${developer.user.id}/impersonation_tokens`, {
      body: { name: 'support', scopes: ['api'] },
    });
    assert.equal(impersonation.statusCode, 201, impersonation.body);
    const [made] = await named('impersonation_token_created', impersonation.json<{ id: number }>().id);
    assert.equal(made?.entity_id, developer.user.id);
    assert.equal(made?.details.author_name, 'root');
  });

  it('records sign-ins and failed sign-ins with the address', async () => {
    const browser = new TestBrowser(t.app, '10.1.2.3');
    const failed = await browser.signIn(owner.user.username, 'wrong-password');
    assert.notEqual(failed.statusCode, 302);
    await browser.signIn(owner.user.username, 'password-123');
    const [failure] = await named('user_sign_in_failed');
    assert.equal(failure?.entity_id, owner.user.id);
    assert.equal(failure?.details.ip_address, '10.1.2.3');
    const [success] = await named('user_signed_in');
    assert.equal(success?.author_id, owner.user.id);
    assert.equal(success?.details.ip_address, '10.1.2.3');
    await new TestBrowser(t.app).signIn('nobody-at-all', 'whatever');
    const [unknown] = await named('user_sign_in_failed');
    assert.equal(unknown?.author_id, -1);
    assert.equal(unknown?.details.entity_path, 'nobody-at-all');
  });

  it('records users created, blocked and made administrator, and members added, changed and removed', async () => {
    const made = await t.api('POST', '/users', {
      body: { username: 'audited-user', name: 'Audited', email: 'audited@example.com', password: 'long-password-1' },
    });
    assert.equal(made.statusCode, 201, made.body);
    const userId = made.json<{ id: number }>().id;
    assert.equal((await named('user_created', userId)).length, 1);
    assert.equal((await t.api('POST', `/users/${userId}/block`)).statusCode, 201);
    assert.equal((await named('user_blocked', userId)).length, 1);
    assert.equal((await t.api('POST', `/users/${userId}/unblock`)).statusCode, 201);
    assert.equal((await t.api('PUT', `/users/${userId}`, { body: { admin: true } })).statusCode, 200);
    const [admin] = await named('user_admin_granted', userId);
    assert.equal(admin?.details.author_name, 'root');

    const added = await t.api('POST', `/projects/${projectId}/members`, {
      token: owner.token,
      body: { user_id: maintainer.user.id, access_level: 30 },
    });
    assert.equal(added.statusCode, 201, added.body);
    const [joined] = await named('member_created', maintainer.user.id);
    assert.equal(joined?.entity_type, 'Project');
    assert.equal(joined?.entity_id, projectId);
    assert.equal(joined?.details.as, 'Developer');
    assert.equal(
      (await t.api('PUT', `/projects/${projectId}/members/${maintainer.user.id}`, { token: owner.token, body: { access_level: 40 } }))
        .statusCode,
      200,
    );
    const [changed] = await named('member_updated', maintainer.user.id);
    assert.deepEqual([changed?.details.from, changed?.details.to, changed?.author_id], ['Developer', 'Maintainer', owner.user.id]);
    await addMember(t.app, 'project', projectId, developer, 30);
    assert.equal((await t.api('DELETE', `/projects/${projectId}/members/${developer.user.id}`, { token: owner.token })).statusCode, 204);
    assert.equal((await named('member_destroyed', developer.user.id)).length, 1);
  });

  it('records OAuth applications, alert integrations, client keys, project settings, storage moves and Sudo, none with a secret', async () => {
    const app = await t.api('POST', '/applications', {
      body: { name: 'audited app', redirect_uri: 'https://app.example/cb', scopes: 'api' },
    });
    assert.equal(app.statusCode, 201, app.body);
    const { id: appId, secret } = app.json<{ id: number; secret: string }>();
    const renewed = await t.api('POST', `/applications/${appId}/renew-secret`);
    assert.equal(renewed.statusCode, 201, renewed.body);
    assert.equal((await named('oauth_application_created', appId)).length, 1);
    const [renewal] = await named('oauth_application_secret_renewed', appId);
    assert.equal(renewal?.entity_type, 'Gitlab::Audit::InstanceScope');
    assert.equal(renewal?.details.author_name, 'root');

    const base = `/projects/${projectId}/alert_management/integrations`;
    const integration = await t.api('POST', base, { token: owner.token, body: { name: 'audited hook', type: 'http' } });
    assert.equal(integration.statusCode, 201, integration.body);
    const { id: integrationId, token: alertKey } = integration.json<{ id: number; token: string }>();
    const reset = await t.api('POST', `${base}/${integrationId}/reset_token`, { token: owner.token });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal((await t.api('DELETE', `${base}/${integrationId}`, { token: owner.token })).statusCode, 204);
    for (const name of ['alert_integration_created', 'alert_integration_token_reset', 'alert_integration_deleted']) {
      const found = await named(name, integrationId);
      assert.equal(found.length, 1, name);
      assert.equal(found[0]?.entity_id, projectId);
      assert.equal(found[0]?.author_id, owner.user.id);
    }

    const put = await t.api('PUT', `/projects/${projectId}/error_tracking/settings`, {
      token: owner.token,
      body: { active: true, integrated: true },
    });
    assert.equal(put.statusCode, 200, put.body);
    const key = await t.api('POST', `/projects/${projectId}/error_tracking/client_keys`, { token: owner.token });
    assert.equal(key.statusCode, 201, key.body);
    const keyId = key.json<{ id: number }>().id;
    assert.equal(
      (await t.api('DELETE', `/projects/${projectId}/error_tracking/client_keys/${keyId}`, { token: owner.token })).statusCode,
      200,
    );
    assert.equal((await named('error_tracking_settings_updated')).filter((e) => e.entity_id === projectId).length, 1);
    assert.equal((await named('error_tracking_client_key_created', keyId)).length, 1);
    assert.equal((await named('error_tracking_client_key_deleted', keyId)).length, 1);

    const renamed = await t.api('PUT', `/projects/${projectId}`, {
      token: owner.token,
      body: { name: 'Renamed', description: 'not audited' },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    const [settings, ...others] = (await named('project_settings_updated')).filter((e) => e.entity_id === projectId);
    assert.equal(others.length, 0);
    assert.equal(settings?.details.name_to, 'Renamed');
    assert.equal(settings?.details.description_to, undefined, 'a description is not a setting that matters');

    const move = await t.api('POST', `/projects/${projectId}/repository_storage_moves`, { body: {} });
    assert.equal(move.statusCode, 201, move.body);
    const [scheduled] = await named('repository_storage_move_scheduled', projectId);
    assert.equal(scheduled?.details.move_id, move.json<{ id: number }>().id);

    // Sudo: recorded once per credential and user and hour, however many requests it makes.
    for (let i = 0; i < 3; i += 1) {
      assert.equal((await t.api('GET', '/user', { headers: { sudo: String(developer.user.id) } })).statusCode, 200);
    }
    const sudo = (await all()).filter((e) => e.event_name === 'sudo_used' && e.entity_id === developer.user.id);
    assert.equal(sudo.length, 1);
    assert.equal(sudo[0]?.details.author_name, 'root');

    const text = JSON.stringify(await t.database.handle.db.selectFrom('audit_events').selectAll().execute());
    for (const value of [secret, renewed.json<{ secret: string }>().secret, alertKey, reset.json<{ token: string }>().token]) {
      assert.ok(!text.includes(value), 'no secret is stored');
    }
  });

  it('filters by entity and time, pages with the usual headers', async () => {
    const byProject = await all({ entity_type: 'Project', entity_id: String(projectId) });
    assert.ok(byProject.length >= 3);
    assert.ok(byProject.every((e) => e.entity_type === 'Project' && e.entity_id === projectId));
    const users = await all({ entity_type: 'User' });
    assert.ok(users.length > 0 && users.every((e) => e.entity_type === 'User'));

    const page = await t.api('GET', '/audit_events', { query: { per_page: '2', page: '2' } });
    assert.equal(page.statusCode, 200);
    assert.equal(page.json<AuditEvent[]>().length, 2);
    assert.equal(page.headers['x-page'], '2');
    assert.equal(Number(page.headers['x-total']), (await all()).length);
    const newest = (await all())[0]!;
    assert.equal(page.json<AuditEvent[]>()[0]?.id, (await all())[2]?.id, 'newest first');

    t.manual!.advance(60_000);
    const cut = new Date(t.clock.now()).toISOString();
    assert.equal((await all({ created_after: cut })).length, 0);
    assert.ok((await all({ created_before: cut })).some((e) => e.id === newest.id));
    const bad = await t.api('GET', '/audit_events', { query: { created_after: 'yesterday' } });
    assert.equal(bad.statusCode, 400);
    assert.equal((await t.api('GET', '/audit_events', { query: { entity_id: '1' } })).statusCode, 400, 'entity_id needs entity_type');

    const one = await t.api('GET', `/audit_events/${newest.id}`);
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), newest);
    assert.equal((await t.api('GET', '/audit_events/999999')).statusCode, 404);
  });

  it('shows a project’s and a group’s events to their Maintainers and Owners only', async () => {
    // maintainer is Maintainer of both projects by now; developer is nothing of `projectId` any more.
    const own = await t.api('GET', `/projects/${projectId}/audit_events`, { token: maintainer.token });
    assert.equal(own.statusCode, 200, own.body);
    const events = own.json<AuditEvent[]>();
    assert.ok(events.length > 0 && events.every((e) => e.entity_type === 'Project' && e.entity_id === projectId));

    const otherEvent = (await all({ entity_type: 'Project', entity_id: String(otherProjectId) }))[0];
    const foreign = (await all()).find((e) => !(e.entity_type === 'Project' && e.entity_id === projectId))!;
    assert.equal((await t.api('GET', `/projects/${projectId}/audit_events/${foreign.id}`, { token: maintainer.token })).statusCode, 404);
    assert.equal((await t.api('GET', `/projects/${projectId}/audit_events/${events[0]!.id}`, { token: maintainer.token })).statusCode, 200);
    if (otherEvent) assert.ok(!events.some((e) => e.id === otherEvent.id));

    assert.equal((await t.api('GET', '/audit_events', { token: maintainer.token })).statusCode, 403);
    await addMember(t.app, 'project', projectId, outsider, 30);
    assert.equal((await t.api('GET', `/projects/${projectId}/audit_events`, { token: outsider.token })).statusCode, 403, 'a Developer');
    const stranger = await createUser(t.app);
    assert.equal((await t.api('GET', `/projects/${projectId}/audit_events`, { token: stranger.token })).statusCode, 404, 'a non-member');

    const group = await t.api('GET', `/groups/${groupId}/audit_events`, { token: owner.token });
    assert.equal(group.statusCode, 200);
    assert.equal((await t.api('GET', `/groups/${groupId}/audit_events`, { token: stranger.token })).statusCode, 404);
  });
  it('a daily job deletes events older than AUDIT_EVENTS_RETENTION_DAYS (365) and schedules its next run', async () => {
    const db = t.database.handle.db;
    const pending = await db.selectFrom('background_jobs').select(['id', 'run_at']).where('kind', '=', 'audit_events_retention').execute();
    assert.equal(pending.length, 1, 'scheduled when the server is ready');
    // Only the retention job is due when drained: the fixtures' other jobs wait.
    await db.updateTable('background_jobs').set({ run_at: 9e15 }).where('kind', '!=', 'audit_events_retention').execute();
    const before = Number(
      (
        await db
          .selectFrom('audit_events')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    assert.ok(before > 0);
    const highest = Math.max(...(await all()).map((e) => e.id));
    t.manual!.advance(364 * 86_400_000);
    await t.app.platform.jobs.drain(5);
    const kept = Number(
      (
        await db
          .selectFrom('audit_events')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    assert.equal(kept, before, 'nothing is a year old yet');
    t.manual!.advance(2 * 86_400_000);
    await t.app.platform.jobs.drain(5);
    const left = Number(
      (
        await db
          .selectFrom('audit_events')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    assert.equal(left, 0, 'everything is older than 365 days now');
    // The ids of deleted events are never handed out again.
    const blocked = await createUser(t.app);
    const block = await t.api('POST', `/users/${blocked.user.id}/block`);
    assert.equal(block.statusCode, 201, block.body);
    const fresh = await all();
    assert.ok(fresh.length > 0 && fresh.every((e) => e.id > highest), `new ids ${fresh.map((e) => e.id).join()} above ${highest}`);
    const next = await db
      .selectFrom('background_jobs')
      .select('run_at')
      .where('kind', '=', 'audit_events_retention')
      .where('state', '=', 'queued')
      .execute();
    assert.equal(next.length, 1, 'the next run is scheduled');
  });
});
