import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ROOT_TOKEN, createTestApp, type TestApp } from '../helpers/app.js';
import { createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';

/**
 * Debian's ruby-gitlab gem (4.17) and its `ruby-gitlab` CLI against a listening server (issue 19).
 * The gem sends HTTParty forms, so arrays arrive as Rack's `scopes[]=…`.
 */
const RUBY = '/usr/bin/ruby';
const CLI = '/usr/bin/ruby-gitlab';
const SCRIPT = path.join(import.meta.dirname, 'fixtures', 'ruby_gitlab_scenarios.rb');
const probe = spawnSync(RUBY, ['-e', 'require "gitlab"; print Gitlab::VERSION'], { encoding: 'utf8' });
const skip = probe.status === 0 ? false : `${RUBY} cannot require "gitlab" (Debian package ruby-gitlab is not installed)`;
const run = promisify(execFile);

describe('the ruby gitlab gem against a listening server', { skip }, () => {
  let t: TestApp;
  let alice: TestUser;
  let context: Record<string, unknown>;

  const scenarios = async (...names: string[]): Promise<Record<string, Record<string, unknown>>> => {
    const { stdout } = await run(RUBY, [SCRIPT, ...names], {
      env: { ...process.env, BASALT_CONTEXT: JSON.stringify(context) },
      timeout: 120_000,
    });
    const results = JSON.parse(stdout) as Record<string, Record<string, unknown>>;
    for (const name of names) assert.equal(results[name]?.unexpected, undefined, `${name}: ${String(results[name]?.unexpected)}`);
    return results;
  };

  before(async () => {
    t = await createTestApp({ manualClock: false });
    alice = await createUser(t.app, { username: 'rb-alice' });
    const group = await createGroup(t.app, alice, { path: 'rb-group' });
    const project = await createProject(t.app, alice, { path: 'gem', namespaceId: group.id });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    context = {
      url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
      root_token: ROOT_TOKEN,
      alice_token: alice.token,
      alice_id: alice.user.id,
      project_id: project.id,
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
    };
  });
  after(() => t?.close());

  it('creates personal and project access tokens with form arrays (scopes[]=…)', async () => {
    const r = await scenarios('tokens');
    assert.deepEqual(r.tokens, {
      personal_scopes: ['read_api', 'read_user'],
      personal_works: 'rb-alice',
      self_scopes: ['read_user'],
      project_scopes: ['read_api'],
      project_access_level: 30,
    });
  });

  it('creates, comments on, closes and lists issues; reads the events they made', async () => {
    const r = await scenarios('issues', 'events');
    assert.deepEqual(r.issues, { iid: 1, note: 'gem note', closed: ['From the gem'], state: 'closed' });
    const events = r.events as { mine: number; issue_actions: string[]; user: number };
    assert.deepEqual(events.issue_actions, ['closed', 'opened']);
    assert.ok(events.mine >= 3 && events.user >= 3, JSON.stringify(events));
  });

  it('edits notification settings with form bodies (booleans as "true"/"false")', async () => {
    const r = await scenarios('notification_settings');
    assert.deepEqual(r.notification_settings, {
      global: 'watch',
      global_read: 'watch',
      project: 'custom',
      events: { new_note: true, close_issue: false },
    });
  });

  it('raises the gem’s error classes with the API’s messages', async () => {
    const r = await scenarios('errors');
    const errors = r.errors as Record<string, { class: string; code: number; message?: string }>;
    assert.equal(errors.missing?.class, 'Gitlab::Error::BadRequest');
    assert.equal(errors.missing?.code, 400);
    assert.match(String(errors.missing?.message), /name, path are missing, at least one parameter must be provided/);
    assert.deepEqual(errors.not_found, { class: 'Gitlab::Error::NotFound', code: 404 });
  });

  it('the ruby-gitlab CLI prints the current user as JSON', async () => {
    const { stdout } = await run(CLI, ['user', '--json'], {
      env: { ...process.env, GITLAB_API_ENDPOINT: `${String(context.url)}/api/v4`, GITLAB_API_PRIVATE_TOKEN: alice.token },
      timeout: 60_000,
    });
    const printed = JSON.parse(stdout) as { result: { username: string } };
    assert.equal(printed.result.username, 'rb-alice');
  });
});
