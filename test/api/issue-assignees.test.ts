import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

type IssueJson = {
  iid: number;
  assignees: { id: number; username: string }[];
  assignee: { id: number } | null;
  due_date: string | null;
  title: string;
};

describe('issue assignees and due dates (API)', () => {
  let t: TestApp;
  let owner: TestUser;
  let dev: TestUser;
  let reporter: TestUser;
  let guest: TestUser;
  let outsider: TestUser;
  let blocked: TestUser;
  let projectId: number;

  before(async () => {
    t = await createTestApp();
    [owner, dev, reporter, guest, outsider, blocked] = (await Promise.all(Array.from({ length: 6 }, () => createUser(t.app)))) as [
      TestUser,
      TestUser,
      TestUser,
      TestUser,
      TestUser,
      TestUser,
    ];
    projectId = (await createProject(t.app, owner, { visibility: 'private' })).id;
    await addMember(t.app, 'project', projectId, dev, 30);
    await addMember(t.app, 'project', projectId, reporter, 20);
    await addMember(t.app, 'project', projectId, guest, 10);
    await addMember(t.app, 'project', projectId, blocked, 30);
    assert.equal((await t.api('POST', `/users/${blocked.user.id}/block`)).statusCode, 201);
  });
  after(() => t.close());

  const create = async (token: string, body: Record<string, unknown>) => {
    const res = await t.api('POST', `/projects/${projectId}/issues`, { token, body: { title: 'An issue', ...body } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<IssueJson>();
  };
  const update = (iid: number, body: Record<string, unknown>, token = owner.token) =>
    t.api('PUT', `/projects/${projectId}/issues/${iid}`, { token, body });
  const ids = (issue: IssueJson) => issue.assignees.map((a) => a.id);

  it('creates with assignee_ids and due_date; the issue shows assignees (user objects), the first as assignee, and the day', async () => {
    const issue = await create(owner.token, { assignee_ids: [reporter.user.id, dev.user.id], due_date: '2030-02-28' });
    assert.deepEqual(
      ids(issue),
      [dev.user.id, reporter.user.id].sort((a, b) => a - b),
    );
    assert.equal(issue.assignee?.id, issue.assignees[0]?.id);
    assert.deepEqual(
      Object.keys(issue.assignees[0]!).sort(),
      ['avatar_url', 'id', 'locked', 'name', 'state', 'username', 'web_url'].sort(),
    );
    assert.equal(issue.due_date, '2030-02-28');
    const shown = (await t.api('GET', `/projects/${projectId}/issues/${issue.iid}`, { token: guest.token })).json<IssueJson>();
    assert.deepEqual(ids(shown), ids(issue));
    assert.equal(shown.due_date, '2030-02-28');
  });

  it('the issue list page names the assignees and due date of each issue, overdue marked on open issues', async () => {
    const path = (await t.api('GET', `/projects/${projectId}`)).json<{ path_with_namespace: string }>().path_with_namespace;
    const late = await create(owner.token, { title: 'Late work', assignee_ids: [dev.user.id], due_date: '2001-01-01' });
    const later = await create(owner.token, { title: 'Later work', due_date: '2099-12-31' });
    const browser = new TestBrowser(t.app);
    assert.equal((await browser.signIn(reporter.user.username, 'password-123')).statusCode, 303);
    const list = await browser.request('GET', `/${path}/-/issues`);
    assert.equal(list.statusCode, 200);
    const row = (iid: number) => list.body.slice(list.body.indexOf(`id="issue-${iid}"`)).split('</li>')[0] ?? '';
    assert.match(row(late.iid), /due <span class="state-overdue">2001-01-01 \(overdue\)<\/span>/);
    assert.match(row(late.iid), new RegExp(`assigned to .*@${dev.user.username}`));
    assert.match(row(later.iid), /due <span>2099-12-31<\/span>/);
    assert.doesNotMatch(row(later.iid), /assigned to/);
  });

  it('assignee_id sets one assignee; 0, [] and [0] unassign; users who cannot see the project are dropped', async () => {
    const issue = await create(owner.token, { assignee_id: dev.user.id });
    assert.deepEqual(ids(issue), [dev.user.id]);
    let res = await update(issue.iid, { assignee_ids: [outsider.user.id, reporter.user.id, blocked.user.id, 999_999] });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(ids(res.json()), [reporter.user.id], 'the outsider, the blocked member and a missing user are dropped');
    // Nobody left who may be assigned: the established product leaves the assignees as they were.
    res = await update(issue.iid, { assignee_ids: [outsider.user.id] });
    assert.deepEqual(ids(res.json()), [reporter.user.id]);
    res = await update(issue.iid, { assignee_id: 0 });
    assert.deepEqual(res.json<IssueJson>().assignees, []);
    assert.equal(res.json<IssueJson>().assignee, null);
    await update(issue.iid, { assignee_ids: [dev.user.id] });
    res = await update(issue.iid, { assignee_ids: [] });
    assert.deepEqual(ids(res.json()), []);
    await update(issue.iid, { assignee_ids: [dev.user.id] });
    res = await update(issue.iid, { assignee_ids: [0] });
    assert.deepEqual(ids(res.json()), []);
    // A form body (`assignee_ids[]=`) reads the same.
    res = await t.app.inject({
      method: 'PUT',
      url: `/api/v4/projects/${projectId}/issues/${issue.iid}`,
      headers: { 'private-token': owner.token, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `assignee_ids[]=${dev.user.id}&assignee_ids[]=${guest.user.id}`,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      ids(res.json()),
      [dev.user.id, guest.user.id].sort((a, b) => a - b),
    );
  });

  it('an outsider becomes assignable once the project is public (they can see it)', async () => {
    const issue = await create(owner.token, {});
    const project = await t.api('POST', `/projects`, {
      token: owner.token,
      body: { name: 'open', path: `open${Date.now()}`, visibility: 'public' },
    });
    assert.equal(project.statusCode, 201, project.body);
    const publicId = project.json<{ id: number }>().id;
    const res = await t.api('POST', `/projects/${publicId}/issues`, {
      token: owner.token,
      body: { title: 'x', assignee_ids: [outsider.user.id] },
    });
    assert.deepEqual(ids(res.json()), [outsider.user.id]);
    // In the private project the same request assigns nobody.
    assert.deepEqual(ids((await update(issue.iid, { assignee_ids: [outsider.user.id] })).json()), []);
  });

  it('due_date must be a real day (400 otherwise); empty or null clears it', async () => {
    const issue = await create(owner.token, {});
    for (const bad of ['2030-02-30', '2030-13-01', 'tomorrow', '30-01-2030', '2030-1-1']) {
      const res = await update(issue.iid, { due_date: bad });
      assert.equal(res.statusCode, 400, bad);
      assert.deepEqual(res.json(), { message: 'due_date is invalid' });
    }
    const refused = await t.api('POST', `/projects/${projectId}/issues`, {
      token: owner.token,
      body: { title: 'x', due_date: '2031-02-29' },
    });
    assert.equal(refused.statusCode, 400);
    assert.equal((await update(issue.iid, { due_date: '2032-02-29' })).json<IssueJson>().due_date, '2032-02-29');
    assert.equal((await update(issue.iid, { due_date: '' })).json<IssueJson>().due_date, null);
    await update(issue.iid, { due_date: '2032-03-01' });
    assert.equal((await update(issue.iid, { due_date: null })).json<IssueJson>().due_date, null);
  });

  it('a Guest author may edit their issue but its assignees and due date stay (Reporter and above set them)', async () => {
    const issue = await create(guest.token, { assignee_ids: [dev.user.id], due_date: '2030-01-01' });
    assert.deepEqual(ids(issue), []);
    assert.equal(issue.due_date, null);
    const res = await update(issue.iid, { title: 'Renamed', assignee_ids: [dev.user.id], due_date: '2030-01-01' }, guest.token);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<IssueJson>().title, 'Renamed');
    assert.deepEqual(ids(res.json()), []);
    assert.equal(res.json<IssueJson>().due_date, null);
    // A Reporter sets them.
    const set = await update(issue.iid, { assignee_ids: [dev.user.id], due_date: '2030-01-01' }, reporter.token);
    assert.deepEqual(ids(set.json()), [dev.user.id]);
    assert.equal(set.json<IssueJson>().due_date, '2030-01-01');
  });

  it('lists filter by assignee_id (id, None, Any), assignee_username and due_date', async () => {
    const projectRes = await t.api('POST', '/projects', { token: owner.token, body: { name: 'lists', path: `lists${Date.now()}` } });
    const pid = projectRes.json<{ id: number }>().id;
    await addMember(t.app, 'project', pid, dev, 30);
    const day = (offset: number) => new Date(t.clock.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const mk = async (title: string, body: Record<string, unknown>) =>
      (await t.api('POST', `/projects/${pid}/issues`, { token: owner.token, body: { title, ...body } })).json<IssueJson>();
    await mk('mine', { assignee_ids: [dev.user.id], due_date: day(-3) });
    await mk('owners', { assignee_ids: [owner.user.id], due_date: day(0) });
    await mk('nobody', {});
    await mk('later', { due_date: day(400) });
    const titles = async (query: Record<string, string>) => {
      const res = await t.api('GET', `/projects/${pid}/issues`, { token: owner.token, query });
      assert.equal(res.statusCode, 200, res.body);
      return res
        .json<IssueJson[]>()
        .map((i) => i.title)
        .sort();
    };
    assert.deepEqual(await titles({ assignee_id: String(dev.user.id) }), ['mine']);
    assert.deepEqual(await titles({ assignee_id: 'None' }), ['later', 'nobody']);
    assert.deepEqual(await titles({ assignee_id: 'any' }), ['mine', 'owners']);
    assert.deepEqual(await titles({ assignee_username: dev.user.username }), ['mine']);
    assert.deepEqual(await titles({ assignee_username: 'nobody-by-that-name' }), []);
    assert.deepEqual(await titles({ due_date: '0' }), ['nobody']);
    assert.deepEqual(await titles({ due_date: 'any' }), ['later', 'mine', 'owners']);
    assert.deepEqual(await titles({ due_date: 'overdue' }), ['mine']);
    assert.deepEqual(await titles({ due_date: 'today' }), ['owners']);
    assert.deepEqual(await titles({ due_date: 'next_month_and_previous_two_weeks' }), ['mine', 'owners']);
    assert.ok((await titles({ due_date: 'week' })).includes('owners'));
    assert.ok((await titles({ due_date: 'month' })).includes('owners'));
    const both = await t.api('GET', `/projects/${pid}/issues`, {
      token: owner.token,
      query: { assignee_id: String(dev.user.id), assignee_username: dev.user.username },
    });
    assert.equal(both.statusCode, 400);
    assert.deepEqual(both.json(), { message: 'assignee_id, assignee_username are mutually exclusive' });
    assert.equal((await t.api('GET', `/projects/${pid}/issues`, { token: owner.token, query: { due_date: 'someday' } })).statusCode, 400);
  });
});

describe('issue assignees on the Free tier', () => {
  let t: TestApp;
  after(() => t.close());

  it('keeps only the first of several assignee_ids, as the established product does on Free', async () => {
    t = await createTestApp({ env: { BASALT_TIER: 'free' } });
    const owner = await createUser(t.app);
    const [a, b] = [await createUser(t.app), await createUser(t.app)];
    const project = await createProject(t.app, owner);
    await addMember(t.app, 'project', project.id, a, 30);
    await addMember(t.app, 'project', project.id, b, 30);
    const res = await t.api('POST', `/projects/${project.id}/issues`, {
      token: owner.token,
      body: { title: 'x', assignee_ids: [b.user.id, a.user.id] },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      res.json<IssueJson>().assignees.map((u) => u.id),
      [b.user.id],
    );
  });
});
