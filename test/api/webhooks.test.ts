import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { basicAuth, createGitTestApp, makeWorkTree, receivePackBody, runGit, ZERO_OID, type GitTestApp } from '../helpers/git.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import type { ProjectRow } from '../../src/modules/projects/index.js';

/*
 * The keys and JSON types of the established product's documented examples ("Webhook events"):
 * each delivery must carry every one with the same type ('?': null is also documented).
 */
type Shape = { [key: string]: string | Shape };
const PROJECT: Shape = {
  id: 'number',
  name: 'string',
  description: 'string',
  web_url: 'string',
  avatar_url: 'null',
  git_ssh_url: 'string',
  git_http_url: 'string',
  namespace: 'string',
  visibility_level: 'number',
  path_with_namespace: 'string',
  default_branch: 'string',
  ci_config_path: 'null',
  homepage: 'string',
  url: 'string',
  ssh_url: 'string',
  http_url: 'string',
};
const USER: Shape = { id: 'number', name: 'string', username: 'string', avatar_url: 'null', email: 'string' };
const SHORT_REPOSITORY: Shape = { name: 'string', url: 'string', description: 'string', homepage: 'string' };
const PUSH: Shape = {
  object_kind: 'string',
  event_name: 'string',
  before: 'string',
  after: 'string',
  ref: 'string',
  ref_protected: 'boolean',
  checkout_sha: 'string?',
  message: 'string?',
  user_id: 'number',
  user_name: 'string',
  user_username: 'string',
  user_email: 'string',
  user_avatar: 'null',
  project_id: 'number',
  project: PROJECT,
  repository: { ...SHORT_REPOSITORY, git_http_url: 'string', git_ssh_url: 'string', visibility_level: 'number' },
  commits: 'array',
  total_commits_count: 'number',
};
const COMMIT: Shape = {
  id: 'string',
  message: 'string',
  title: 'string',
  timestamp: 'string',
  url: 'string',
  author: { name: 'string', email: 'string' },
  added: 'array',
  modified: 'array',
  removed: 'array',
};
const ISSUE_ATTRIBUTES: Shape = {
  author_id: 'number',
  closed_at: 'string?',
  confidential: 'boolean',
  created_at: 'string',
  description: 'string',
  discussion_locked: 'null',
  due_date: 'string?',
  id: 'number',
  iid: 'number',
  last_edited_at: 'null',
  last_edited_by_id: 'null',
  milestone_id: 'null',
  moved_to_id: 'null',
  duplicated_to_id: 'null',
  project_id: 'number',
  relative_position: 'null',
  state_id: 'number',
  time_estimate: 'number',
  title: 'string',
  updated_at: 'string',
  updated_by_id: 'null',
  type: 'string',
  url: 'string',
  total_time_spent: 'number',
  time_change: 'number',
  human_total_time_spent: 'null',
  human_time_change: 'null',
  human_time_estimate: 'null',
  assignee_ids: 'array',
  assignee_id: 'number?',
  labels: 'array',
  state: 'string',
  severity: 'string',
};
const ISSUE: Shape = {
  object_kind: 'string',
  event_type: 'string',
  user: USER,
  project: PROJECT,
  object_attributes: { ...ISSUE_ATTRIBUTES, action: 'string' },
  labels: 'array',
  changes: 'object',
  repository: SHORT_REPOSITORY,
};
const NOTE: Shape = {
  object_kind: 'string',
  event_type: 'string',
  user: USER,
  project_id: 'number',
  project: PROJECT,
  object_attributes: {
    id: 'number',
    note: 'string',
    noteable_type: 'string',
    author_id: 'number',
    created_at: 'string',
    updated_at: 'string',
    project_id: 'number',
    attachment: 'null',
    line_code: 'null',
    commit_id: 'null',
    noteable_id: 'number',
    system: 'boolean',
    st_diff: 'null',
    url: 'string',
    action: 'string',
  },
  repository: SHORT_REPOSITORY,
  issue: ISSUE_ATTRIBUTES,
};

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function assertShape(actual: unknown, shape: Shape, at = '$'): void {
  assert.equal(typeOf(actual), 'object', at);
  const record = actual as Record<string, unknown>;
  for (const [key, expected] of Object.entries(shape)) {
    assert.ok(key in record, `${at}.${key} is missing`);
    if (typeof expected === 'object') assertShape(record[key], expected, `${at}.${key}`);
    else if (expected.endsWith('?'))
      assert.ok([expected.slice(0, -1), 'null'].includes(typeOf(record[key])), `${at}.${key}: ${typeOf(record[key])}`);
    else assert.equal(typeOf(record[key]), expected, `${at}.${key}`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('webhooks', () => {
  let t: GitTestApp;
  let owner: TestUser;
  let developer: TestUser;
  let project: ProjectRow;
  const receiver = new WebhookReceiver();
  const deliver = () => t.app.platform.outbox.drain();

  before(async () => {
    await receiver.start();
    t = await createGitTestApp({ env: { WEBHOOK_ALLOW_LOCAL_NETWORK: 'true' } });
    owner = await createUser(t.app);
    developer = await createUser(t.app);
    const group = await createGroup(t.app, owner, { path: 'hooked' });
    project = await createProject(t.app, owner, { path: 'app', namespaceId: group.id });
    await addMember(t.app, 'project', project.id, developer, 30);
    await t.app.platform.jobs.drain();
  });
  after(async () => {
    await t.close();
    await receiver.stop();
  });

  const addHook = async (body: Record<string, unknown>, base = `/projects/${project.id}/hooks`) => {
    const res = await t.api('POST', base, { token: owner.token, body: { url: `${receiver.url}/hook`, ...body } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: number } & Record<string, unknown>>();
  };
  const removeHook = async (id: number, base = `/projects/${project.id}/hooks`) =>
    assert.equal((await t.api('DELETE', `${base}/${id}`, { token: owner.token })).statusCode, 204);

  it('a Maintainer adds, lists, shows, edits and removes a project hook; the token is never answered', async () => {
    const created = await addHook({ token: 's3cret', name: 'CI', issues_events: true, push_events_branch_filter: 'main' });
    assert.equal(created.url, `${receiver.url}/hook`);
    assert.equal(created.project_id, project.id);
    assert.equal(created.push_events, true);
    assert.equal(created.issues_events, true);
    assert.equal(created.tag_push_events, false);
    assert.equal(created.enable_ssl_verification, true);
    assert.equal(created.alert_status, 'executable');
    assert.equal(created.disabled_until, null);
    assert.equal(created.branch_filter_strategy, 'wildcard');
    assert.ok(!('token' in created));
    const list = await t.api('GET', `/projects/${project.id}/hooks`, { token: owner.token });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(
      list.json<{ id: number }[]>().map((h) => h.id),
      [created.id],
    );
    assert.ok(!list.body.includes('s3cret'));
    const edited = await t.api('PUT', `/projects/${project.id}/hooks/${created.id}`, {
      token: owner.token,
      body: { note_events: 'true', branch_filter_strategy: 'regex', push_events_branch_filter: '^(main|release/.*)$' },
    });
    assert.equal(edited.statusCode, 200, edited.body);
    assert.equal(edited.json().note_events, true);
    assert.equal(edited.json().push_events_branch_filter, '^(main|release/.*)$');
    const shown = await t.api('GET', `/projects/${project.id}/hooks/${created.id}`, { token: owner.token });
    assert.equal(shown.json().name, 'CI');
    // A Developer may not see or change hooks; the checks are the established product's.
    assert.equal((await t.api('GET', `/projects/${project.id}/hooks`, { token: developer.token })).statusCode, 403);
    for (const [body, field] of [
      [{ url: 'ftp://example.com/' }, 'url'],
      [{ url: 'http://user:pw@example.com/' }, 'url'],
      [{ url: `${receiver.url}/x`, branch_filter_strategy: 'regex', push_events_branch_filter: '(' }, 'push_events_branch_filter'],
    ] as const) {
      const refused = await t.api('POST', `/projects/${project.id}/hooks`, { token: owner.token, body });
      assert.equal(refused.statusCode, 400, JSON.stringify(body));
      assert.ok(refused.json().message[field], refused.body);
    }
    await removeHook(created.id);
    assert.equal((await t.api('GET', `/projects/${project.id}/hooks/${created.id}`, { token: owner.token })).statusCode, 404);
  });

  it('issues, incidents and confidential issues send Issue Hooks with the documented headers and payload', async () => {
    const hook = await addHook({ token: 'tok-1', push_events: false, issues_events: true });
    const confidentialHook = await addHook({ push_events: false, confidential_issues_events: true });
    receiver.take();
    const opened = await t.api('POST', `/projects/${project.id}/issues`, {
      token: developer.token,
      body: { title: 'Broken build', description: 'It fails' },
    });
    assert.equal(opened.statusCode, 201);
    // Nothing leaves the server on the request path: the outbox sends it.
    assert.equal(receiver.received.length, 0);
    await deliver();
    const [issueHook, ...others] = receiver.take();
    assert.equal(others.length, 0, 'only the hook that wants issues events');
    const h = issueHook!.headers;
    assert.equal(h['x-gitlab-event'], 'Issue Hook');
    assert.equal(h['x-gitlab-token'], 'tok-1');
    assert.match(String(h['x-gitlab-event-uuid']), UUID);
    assert.match(String(h['x-gitlab-webhook-uuid']), UUID);
    assert.equal(h['x-gitlab-instance'], 'http://basalt.test');
    assert.equal(h['user-agent'], 'GitLab/0.1.0');
    assert.match(String(h['content-type']), /^application\/json/);
    assert.match(String(h['idempotency-key']), /.+/);
    assert.equal(issueHook!.path, '/hook');
    assertShape(issueHook!.body, ISSUE);
    const body = issueHook!.body as {
      object_kind: string;
      event_type: string;
      object_attributes: Record<string, unknown>;
      user: { username: string };
    };
    assert.equal(body.object_kind, 'issue');
    assert.equal(body.event_type, 'issue');
    assert.equal(body.object_attributes.action, 'open');
    assert.equal(body.object_attributes.title, 'Broken build');
    assert.equal(body.object_attributes.type, 'Issue');
    assert.equal(body.object_attributes.url, `http://basalt.test/${project.full_path}/-/issues/${opened.json().iid}`);
    assert.equal(body.user.username, developer.user.username);

    const closed = await t.api('PUT', `/projects/${project.id}/issues/${opened.json().iid}`, {
      token: owner.token,
      body: { state_event: 'close' },
    });
    assert.equal(closed.statusCode, 200);
    await deliver();
    const [close] = receiver.take('Issue Hook');
    assert.equal((close!.body.object_attributes as Record<string, unknown>).action, 'close');
    assert.equal((close!.body.object_attributes as Record<string, unknown>).state, 'closed');
    assert.deepEqual((close!.body.changes as Record<string, unknown>).state_id, { previous: 1, current: 2 });

    // An edit is an update, with what changed before and after.
    await t.api('PUT', `/projects/${project.id}/issues/${opened.json().iid}`, {
      token: owner.token,
      body: { title: 'Broken build on main' },
    });
    await deliver();
    const [update] = receiver.take('Issue Hook');
    assert.equal((update!.body.object_attributes as Record<string, unknown>).action, 'update');
    assert.deepEqual(update!.body.changes, { title: { previous: 'Broken build', current: 'Broken build on main' } });

    await t.api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'Outage', issue_type: 'incident' } });
    await t.api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'Secret', confidential: true } });
    await deliver();
    const received = receiver.take();
    assert.equal(received.length, 2);
    const incident = received.find((r) => (r.body.object_attributes as { title: string }).title === 'Outage')!;
    assert.equal(incident.headers['x-gitlab-event'], 'Issue Hook');
    assert.equal((incident.body.object_attributes as Record<string, unknown>).type, 'Incident');
    assert.equal(incident.headers['x-gitlab-token'], 'tok-1');
    const secret = received.find((r) => (r.body.object_attributes as { title: string }).title === 'Secret')!;
    assert.equal(secret.body.event_type, 'confidential_issue');
    // Receivers tell confidential issues apart by the event header too (the established product's hook name).
    assert.equal(secret.headers['x-gitlab-event'], 'Confidential Issue Hook');
    assertShape(secret.body, ISSUE);
    assert.equal(secret.headers['x-gitlab-token'], undefined, 'only the confidential hook, which has no token');
    await removeHook(hook.id);
    await removeHook(confidentialHook.id);
  });

  it('assigning and setting a due date send an Issue Hook with assignees, assignee_ids, due_date and their changes', async () => {
    const hook = await addHook({ push_events: false, issues_events: true, note_events: true });
    const opened = await t.api('POST', `/projects/${project.id}/issues`, {
      token: owner.token,
      body: { title: 'Assign me', assignee_ids: [developer.user.id], due_date: '2031-03-01' },
    });
    assert.equal(opened.statusCode, 201, opened.body);
    const iid = opened.json<{ iid: number }>().iid;
    await deliver();
    const [open] = receiver.take('Issue Hook');
    assertShape(open!.body, ISSUE);
    const attrs = open!.body.object_attributes as Record<string, unknown>;
    assert.deepEqual(attrs.assignee_ids, [developer.user.id]);
    assert.equal(attrs.assignee_id, developer.user.id);
    assert.equal(attrs.due_date, '2031-03-01');
    assert.deepEqual(open!.body.assignees, [
      {
        id: developer.user.id,
        name: developer.user.name,
        username: developer.user.username,
        avatar_url: null,
        email: developer.user.email,
      },
    ]);

    await t.api('PUT', `/projects/${project.id}/issues/${iid}`, {
      token: owner.token,
      body: { assignee_ids: [owner.user.id], due_date: '2031-04-01' },
    });
    await deliver();
    const [update] = receiver.take('Issue Hook');
    const changes = update!.body.changes as Record<string, { previous: unknown; current: unknown }>;
    assert.deepEqual(changes.due_date, { previous: '2031-03-01', current: '2031-04-01' });
    assert.deepEqual(
      (changes.assignees!.previous as { username: string }[]).map((u) => u.username),
      [developer.user.username],
    );
    assert.deepEqual(
      (changes.assignees!.current as { username: string }[]).map((u) => u.username),
      [owner.user.username],
    );
    assertShape((changes.assignees!.current as unknown[])[0], USER);
    assert.equal((update!.body.object_attributes as Record<string, unknown>).assignee_id, owner.user.id);

    // Unassigned: no `assignees` key, as the established product sends it.
    await t.api('PUT', `/projects/${project.id}/issues/${iid}`, { token: owner.token, body: { assignee_ids: [] } });
    await deliver();
    const [cleared] = receiver.take('Issue Hook');
    assert.equal('assignees' in cleared!.body, false);
    assert.deepEqual((cleared!.body.object_attributes as Record<string, unknown>).assignee_ids, []);
    assert.deepEqual((cleared!.body.changes as Record<string, { current: unknown }>).assignees!.current, []);

    // The Note Hook's issue carries the same fields.
    await t.api('POST', `/projects/${project.id}/issues/${iid}/notes`, { token: owner.token, body: { body: 'Due in April.' } });
    await deliver();
    const [note] = receiver.take('Note Hook');
    assert.equal((note!.body.issue as Record<string, unknown>).due_date, '2031-04-01');
    await removeHook(hook.id);
  });

  it('a comment on an issue sends a Note Hook', async () => {
    const hook = await addHook({ push_events: false, note_events: true });
    const issue = await t.api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'Discuss' } });
    await t.api('POST', `/projects/${project.id}/issues/${issue.json().iid}/notes`, {
      token: developer.token,
      body: { body: 'Looks good' },
    });
    await deliver();
    const [note, ...rest] = receiver.take();
    assert.equal(rest.length, 0);
    assert.equal(note!.headers['x-gitlab-event'], 'Note Hook');
    assertShape(note!.body, NOTE);
    const attributes = note!.body.object_attributes as Record<string, unknown>;
    assert.equal(note!.body.object_kind, 'note');
    assert.equal(note!.body.event_type, 'note');
    assert.equal(attributes.note, 'Looks good');
    assert.equal(attributes.noteable_type, 'Issue');
    assert.match(String(attributes.url), new RegExp(`/-/issues/${issue.json().iid}#note_\\d+$`));
    assert.equal((note!.body.issue as Record<string, unknown>).iid, issue.json().iid);
    // An edited comment is sent again as an update.
    const edited = await t.api('PUT', `/projects/${project.id}/issues/${issue.json().iid}/notes/${Number(attributes.id)}`, {
      token: developer.token,
      body: { body: 'Looks good to me' },
    });
    assert.equal(edited.statusCode, 200, edited.body);
    await deliver();
    const [update] = receiver.take('Note Hook');
    assert.equal((update!.body.object_attributes as Record<string, unknown>).action, 'update');
    assert.equal((update!.body.object_attributes as Record<string, unknown>).note, 'Looks good to me');
    await removeHook(hook.id);
  });

  it('a push with git sends a Push Hook with its commits, a tag a Tag Push Hook; the branch filter applies', async () => {
    const hook = await addHook({ push_events: true, tag_push_events: true, push_events_branch_filter: 'main' });
    const work = path.join(t.scratch, 'push');
    const first = await makeWorkTree(work, 2, 'change');
    await runGit(['commit', '--quiet', '--allow-empty', '-m', 'Add the readme\n\nWith a body.'], { cwd: work });
    const head = await runGit(['rev-parse', 'HEAD'], { cwd: work });
    await runGit(['tag', '-a', '-m', 'First release', 'v1.0', head], { cwd: work });
    const tagOid = await runGit(['rev-parse', 'v1.0'], { cwd: work });
    const push = (commands: { old: string; new: string; ref: string }[], revs: string[]) =>
      receivePackBody(work, commands, revs).then((payload) =>
        t.app.inject({
          method: 'POST',
          url: `/${project.full_path}.git/git-receive-pack`,
          headers: { 'content-type': 'application/x-git-receive-pack-request', authorization: basicAuth('oauth2', owner.token) },
          payload,
        }),
      );
    const pushed = await push(
      [
        { old: ZERO_OID, new: head, ref: 'refs/heads/main' },
        { old: ZERO_OID, new: first, ref: 'refs/heads/feature' },
        { old: ZERO_OID, new: tagOid, ref: 'refs/tags/v1.0' },
      ],
      [head, tagOid],
    );
    assert.equal(pushed.statusCode, 200);
    assert.match(pushed.body, /unpack ok/);
    await deliver();
    const pushes = receiver.take();
    const branch = pushes.filter((r) => r.headers['x-gitlab-event'] === 'Push Hook');
    const tags = pushes.filter((r) => r.headers['x-gitlab-event'] === 'Tag Push Hook');
    assert.equal(branch.length, 1, 'the feature branch is filtered out');
    assert.equal(tags.length, 1);
    const body = branch[0]!.body;
    assertShape(body, PUSH);
    assert.equal(body.object_kind, 'push');
    assert.equal(body.ref, 'refs/heads/main');
    assert.equal(body.before, ZERO_OID);
    assert.equal(body.after, head);
    assert.equal(body.checkout_sha, head);
    assert.equal(body.total_commits_count, 3);
    const commits = body.commits as Record<string, unknown>[];
    assert.equal(commits.length, 3);
    for (const commit of commits) assertShape(commit, COMMIT);
    assert.equal(commits[2]!.id, head, 'oldest first, newest last');
    assert.equal(commits[2]!.title, 'Add the readme');
    assert.equal(commits[2]!.message, 'Add the readme\n\nWith a body.\n');
    assert.equal(commits[2]!.url, `http://basalt.test/${project.full_path}/-/commit/${head}`);
    assert.deepEqual(commits[2]!.author, { name: 'Tester', email: 'tester@example.com' });
    assert.equal(body.user_username, owner.user.username);
    const tag = tags[0]!.body;
    assertShape(tag, PUSH);
    assert.equal(tag.object_kind, 'tag_push');
    assert.equal(tag.ref, 'refs/tags/v1.0');
    assert.equal(tag.message, 'First release');
    assert.equal(tag.checkout_sha, tagOid);
    await removeHook(hook.id);
  });

  it('a failing receiver sees retries (the first after a minute), then the hook is disabled for a while', async () => {
    const hook = await addHook({ push_events: false, issues_events: true, token: 'tok-2' });
    receiver.status = 500;
    receiver.take();
    try {
      for (let i = 0; i < 2; i += 1)
        await t.api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: `Flaky ${i}` } });
      await deliver();
      assert.equal(receiver.take().length, 2, 'both events tried once');
      await deliver();
      assert.equal(receiver.received.length, 0, 'no retry before the backoff');
      t.manual!.advance(61_000);
      await deliver();
      assert.equal(receiver.take().length, 2, 'retried within a minute or two');
      // Four failures in a row: the hook is disabled for a minute and shows it.
      const shown = (await t.api('GET', `/projects/${project.id}/hooks/${hook.id}`, { token: owner.token })).json();
      assert.equal(shown.alert_status, 'temporarily_disabled');
      assert.ok(Date.parse(shown.disabled_until) > t.clock.now());
      // While disabled, nothing is sent and new events do not queue for it.
      await t.api('POST', `/projects/${project.id}/issues`, { token: owner.token, body: { title: 'Ignored' } });
      t.manual!.advance(60_000);
      await deliver();
      assert.equal(receiver.take().length, 0);
      // After the wait the queued retries go out; the receiver is back, and one success clears it all.
      receiver.status = 200;
      t.manual!.advance(120_000);
      await deliver();
      assert.ok(receiver.take().length >= 1);
      const healed = (await t.api('GET', `/projects/${project.id}/hooks/${hook.id}`, { token: owner.token })).json();
      assert.equal(healed.alert_status, 'executable');
      assert.equal(healed.disabled_until, null);
      // Every delivery is recorded with what was sent and what came back (the token masked).
      const logs = await t.app.platform.db
        .selectFrom('web_hook_logs')
        .selectAll()
        .where('web_hook_id', '=', hook.id)
        .orderBy('id')
        .execute();
      assert.ok(logs.length >= 5);
      assert.equal(logs[0]!.response_status, '500');
      assert.equal(logs[0]!.response_body, 'receiver failed');
      assert.equal(JSON.parse(logs[0]!.response_headers)['x-receiver'], 'test');
      assert.equal(JSON.parse(logs[0]!.request_headers)['X-Gitlab-Token'], '[REDACTED]');
      assert.equal(JSON.parse(logs[0]!.request_data).object_kind, 'issue');
    } finally {
      receiver.status = 200;
    }
    await removeHook(hook.id);
  });

  it('the test endpoint sends the trigger now and answers what the receiver said', async () => {
    const hook = await addHook({ note_events: true });
    const ok = await t.api('POST', `/projects/${project.id}/hooks/${hook.id}/test/push_events`, { token: owner.token });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.deepEqual(ok.json(), { message: '201 Created' });
    assert.equal(receiver.take('Push Hook').length, 1);
    assert.equal(
      (await t.api('POST', `/projects/${project.id}/hooks/${hook.id}/test/issues_events`, { token: owner.token })).statusCode,
      201,
    );
    assert.equal(receiver.take('Issue Hook').length, 1);
    receiver.status = 502;
    const failed = await t.api('POST', `/projects/${project.id}/hooks/${hook.id}/test/note_events`, { token: owner.token });
    receiver.status = 200;
    assert.equal(failed.statusCode, 422);
    assert.match(failed.json().message, /HTTP 502/);
    assert.equal((await t.api('POST', `/projects/${project.id}/hooks/${hook.id}/test/nothing`, { token: owner.token })).statusCode, 400);
    await removeHook(hook.id);
  });

  it('group hooks (Owner) receive the events of the projects below the group', async () => {
    const group = await createGroup(t.app, owner, { path: 'parent' });
    const child = await createGroup(t.app, owner, { path: 'child', parentId: group.id });
    const inner = await createProject(t.app, owner, { path: 'inner', namespaceId: child.id });
    const base = `/groups/${group.id}/hooks`;
    const hook = await addHook({ push_events: false, issues_events: true }, base);
    assert.equal(hook.group_id, group.id);
    assert.equal((await t.api('GET', base, { token: developer.token })).statusCode, 404);
    await t.api('POST', `/projects/${inner.id}/issues`, { token: owner.token, body: { title: 'Deep' } });
    await deliver();
    const [got] = receiver.take('Issue Hook');
    assert.equal((got!.body.project as { path_with_namespace: string }).path_with_namespace, 'parent/child/inner');
    assert.equal((await t.api('POST', `${base}/${hook.id}/test/issues_events`, { token: owner.token })).statusCode, 201);
    receiver.take();
    await removeHook(hook.id, base);
  });
});

describe('webhooks without WEBHOOK_ALLOW_LOCAL_NETWORK', () => {
  let t: TestApp;
  let owner: TestUser;
  let project: ProjectRow;
  const receiver = new WebhookReceiver();

  before(async () => {
    await receiver.start();
    t = await createTestApp();
    owner = await createUser(t.app);
    project = await createProject(t.app, owner);
  });
  after(async () => {
    await t.close();
    await receiver.stop();
  });

  it('refuses loopback, private, link-local and unique-local targets when a hook is saved', async () => {
    assert.equal(t.config.webhookAllowLocalNetwork, false);
    for (const url of [
      receiver.url,
      'http://localhost/',
      'http://10.1.2.3/',
      'http://192.168.0.1:8080/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://[fd00::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://0.0.0.0/',
    ]) {
      const res = await t.api('POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url } });
      assert.equal(res.statusCode, 400, url);
      assert.match(JSON.stringify(res.json().message.url), /is blocked/, url);
    }
  });

  it('a delivery to a local address is refused at connection time, whatever the stored URL says', async () => {
    // A hook saved while the name pointed outside: the delivery checks the address it connects to.
    const now = t.clock.now();
    const row = await t.app.platform.db
      .insertInto('web_hooks')
      .values({
        project_id: project.id,
        group_id: null,
        uuid: '6a1d2a2e-1111-4c1c-9d2b-1e0e0e0e0e0e',
        url: `http://localhost:${new URL(receiver.url).port}/`,
        token_sealed: null,
        push_events: 1,
        tag_push_events: 0,
        issues_events: 1,
        confidential_issues_events: 0,
        note_events: 0,
        confidential_note_events: 0,
        enable_ssl_verification: 1,
        push_events_branch_filter: null,
        branch_filter_strategy: 'wildcard',
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await t.api('POST', `/projects/${project.id}/hooks/${row.id}/test/push_events`, { token: owner.token });
    assert.equal(res.statusCode, 422);
    assert.match(res.json().message, /Requests to the local network are not allowed/);
    assert.equal(receiver.received.length, 0, 'the receiver was never reached');
  });
});
