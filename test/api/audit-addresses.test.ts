import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { issueTokens, registerApp, sessionCookie } from '../helpers/oauth.js';
import { appWithUsers } from '../helpers/suite.js';

interface AuditEvent {
  id: number;
  author_id: number;
  entity_id: number;
  entity_type: string;
  event_name: string;
  details: Record<string, unknown>;
}

/**
 * Issue 24's gaps: every event a request causes carries its client address, automatic
 * revocations (replayed rotated-out tokens, refresh-token reuse) are recorded with the system as
 * author, and failed git-over-HTTP passwords are failed sign-ins. Each request here comes from
 * its own documentation address (RFC 5737), so the address recorded is the request's own.
 */
describe('audit events: addresses, automatic revocations and git passwords', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;

  /** A request from `ip` (the app trusts no proxy, so the socket's address is the client's). */
  const from = (ip: string, options: InjectOptions) => t.app.inject({ ...options, remoteAddress: ip });
  const api = (ip: string, method: InjectOptions['method'], url: string, token: string, body?: object) =>
    from(ip, {
      method,
      url: `/api/v4${url}`,
      headers: { 'private-token': token },
      ...(body ? { payload: body } : {}),
    });
  /** Events of one name (as root, through the audit events API), optionally about one target. */
  const named = async (eventName: string, targetId?: number): Promise<AuditEvent[]> => {
    const res = await t.api('GET', '/audit_events', { query: { per_page: '100' } });
    assert.equal(res.statusCode, 200, res.body);
    return res
      .json<AuditEvent[]>()
      .filter((e) => e.event_name === eventName && (targetId === undefined || e.details.target_id === targetId));
  };
  const only = async (eventName: string, targetId?: number): Promise<AuditEvent> => {
    const events = await named(eventName, targetId);
    assert.equal(events.length, 1, `${eventName} is recorded once: ${JSON.stringify(events)}`);
    return events[0] as AuditEvent;
  };

  before(async () => {
    ({ t, owner, member } = await appWithUsers(['owner', 'member']));
  });
  after(() => t.close());

  it('records the address of the request on a token, a membership and a project setting changed through the API', async () => {
    const created = await api('198.51.100.7', 'POST', '/user/personal_access_tokens', owner.token, {
      name: 'addressed',
      scopes: ['read_api'],
    });
    assert.equal(created.statusCode, 201, created.body);
    const token = await only('personal_access_token_created', created.json<{ id: number }>().id);
    assert.equal(token.author_id, owner.user.id);
    assert.equal(token.entity_id, owner.user.id);
    assert.equal(token.details.ip_address, '198.51.100.7');

    const project = await createProject(t.app, owner);
    const added = await api('198.51.100.8', 'POST', `/projects/${project.id}/members`, owner.token, {
      user_id: member.user.id,
      access_level: 30,
    });
    assert.equal(added.statusCode, 201, added.body);
    const joined = await only('member_created', member.user.id);
    assert.equal(joined.author_id, owner.user.id);
    assert.equal(joined.entity_type, 'Project');
    assert.equal(joined.entity_id, project.id);
    assert.equal(joined.details.ip_address, '198.51.100.8');

    const removed = await api('198.51.100.9', 'DELETE', `/projects/${project.id}/members/${member.user.id}`, owner.token);
    assert.equal(removed.statusCode, 204, removed.body);
    const left = await only('member_destroyed', member.user.id);
    assert.equal(left.entity_id, project.id);
    assert.equal(left.details.ip_address, '198.51.100.9');

    const changed = await api('198.51.100.10', 'PUT', `/projects/${project.id}`, owner.token, { visibility: 'internal' });
    assert.equal(changed.statusCode, 200, changed.body);
    const setting = (await named('project_settings_updated')).find((e) => e.entity_id === project.id);
    assert.ok(setting, 'the visibility change is recorded');
    assert.equal(setting.author_id, owner.user.id);
    assert.equal(setting.details.ip_address, '198.51.100.10');
  });

  it('records a replayed rotated-out personal token revoking its family, once, by the system, with the address', async () => {
    const user = await createUser(t.app);
    const first = await api('203.0.113.1', 'POST', '/user/personal_access_tokens', user.token, { name: 'chain', scopes: ['api'] });
    const { id, token } = first.json<{ id: number; token: string }>();
    const rotated = await api('203.0.113.1', 'POST', '/personal_access_tokens/self/rotate', token);
    assert.equal(rotated.statusCode, 200, rotated.body);
    const next = rotated.json<{ id: number }>();

    // The old secret again, from another address: refused, and the whole chain ends.
    const replay = await api('203.0.113.66', 'POST', '/personal_access_tokens/self/rotate', token);
    assert.equal(replay.statusCode, 401, replay.body);
    const revoked = await only('personal_access_token_revoked', id);
    assert.equal(revoked.author_id, -1);
    assert.equal(revoked.details.author_name, 'system');
    assert.equal(revoked.entity_type, 'User');
    assert.equal(revoked.entity_id, user.user.id);
    assert.equal(revoked.details.ip_address, '203.0.113.66');
    assert.equal(revoked.details.reason, 'rotated_token_reused');
    assert.equal(revoked.details.revoked_tokens, 1, 'the live successor was revoked');
    assert.equal((await t.api('GET', '/personal_access_tokens/self', { token: user.token })).statusCode, 200);
    const successor = await t.api('GET', `/personal_access_tokens/${next.id}`);
    assert.equal(successor.json<{ revoked: boolean }>().revoked, true);

    // A second replay finds nothing live: nothing more is recorded.
    assert.equal((await api('203.0.113.66', 'POST', '/personal_access_tokens/self/rotate', token)).statusCode, 401);
    assert.equal((await named('personal_access_token_revoked', id)).length, 1);
  });

  it('records a reused refresh token revoking its family, once, by the system, about the user, with the address', async () => {
    const user = await createUser(t.app);
    const client = await registerApp(t, { scopes: 'api' });
    const tokens = await issueTokens(t, await sessionCookie(t, user), client, { scope: 'api' });
    const refresh = (ip: string) =>
      from(ip, {
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: client.clientId,
          client_secret: client.secret,
        }).toString(),
      });
    assert.equal((await refresh('192.0.2.10')).statusCode, 200);
    const reuse = await refresh('192.0.2.99');
    assert.equal(reuse.statusCode, 400, reuse.body);
    const events = (await named('oauth_access_token_revoked')).filter((e) => e.entity_id === user.user.id);
    assert.equal(events.length, 1, JSON.stringify(events));
    const [event] = events as [AuditEvent];
    assert.equal(event.author_id, -1);
    assert.equal(event.details.author_name, 'system');
    assert.equal(event.entity_type, 'User');
    assert.equal(event.details.reason, 'refresh_token_reused');
    assert.equal(event.details.client_id, client.clientId);
    assert.equal(event.details.ip_address, '192.0.2.99');
    assert.equal(event.details.revoked_tokens, 1);

    // Replayed again: the family holds nothing live, so nothing more is recorded.
    assert.equal((await refresh('192.0.2.99')).statusCode, 400);
    assert.equal((await named('oauth_access_token_revoked')).filter((e) => e.entity_id === user.user.id).length, 1);
    // The client's own revocation (RFC 7009) carries its address too.
    const fresh = await issueTokens(t, await sessionCookie(t, user), client, { scope: 'api' });
    const revoked = await from('192.0.2.20', {
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: fresh.access_token, client_id: client.clientId, client_secret: client.secret }).toString(),
    });
    assert.equal(revoked.statusCode, 200, revoked.body);
    const byClient = (await named('oauth_access_token_revoked')).filter((e) => e.details.ip_address === '192.0.2.20');
    assert.equal(byClient.length, 1);
  });

  it('records a failed git-over-HTTP password as a failed sign-in of the account, once, with the address', async () => {
    const user = await createUser(t.app);
    const project = await createProject(t.app, user, { visibility: 'private' });
    const git = (ip: string, login: string, password: string) =>
      from(ip, {
        method: 'GET',
        url: `/${project.full_path}.git/info/refs?service=git-upload-pack`,
        headers: { authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}` },
      });
    const refused = await git('198.51.100.77', user.user.username, 'not-the-password');
    assert.equal(refused.statusCode, 401, refused.body);
    const failures = (await named('user_sign_in_failed')).filter((e) => e.entity_id === user.user.id);
    assert.equal(failures.length, 1, JSON.stringify(failures));
    const [failure] = failures as [AuditEvent];
    assert.equal(failure.author_id, user.user.id);
    assert.equal(failure.entity_type, 'User');
    assert.equal(failure.details.via, 'git_http');
    assert.equal(failure.details.ip_address, '198.51.100.77');

    // A token as password is no password failure; an unknown login is recorded under the login.
    assert.equal((await git('198.51.100.77', 'anything', user.token)).statusCode, 200);
    assert.equal((await git('198.51.100.78', 'nobody-here', 'guess')).statusCode, 401);
    const unknown = (await named('user_sign_in_failed')).filter((e) => e.details.entity_path === 'nobody-here');
    assert.equal(unknown.length, 1);
    assert.equal(unknown[0]?.author_id, -1);
    assert.equal(unknown[0]?.details.ip_address, '198.51.100.78');
    assert.equal((await named('user_sign_in_failed')).filter((e) => e.entity_id === user.user.id).length, 1);
  });
});
