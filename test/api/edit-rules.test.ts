// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { addMember, createProject, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

const SPAM_ENV = { SPAM_BLOCKED_PATTERNS: 'cheap pills', SPAM_MAX_LINKS: '2' };
const DISCARDED = (kind: string) => ({ message: { error: `Your ${kind} has been recognized as spam and has been discarded.` } });

describe('edits go through the rules of creation', () => {
  let t: TestApp;
  let owner: TestUser;
  let outsider: TestUser;
  let reporter: TestUser;
  let projectId: number;
  before(async () => {
    ({ t, owner, outsider, reporter } = await appWithUsers(['owner', 'outsider', 'reporter'], { env: SPAM_ENV }));
    projectId = (await createProject(t.app, owner, { visibility: 'public' })).id;
    await addMember(t.app, 'project', projectId, reporter, 20);
  });
  after(() => t.close());

  const openIssue = async (user: TestUser, title = 'A bug'): Promise<number> => {
    const res = await t.api('POST', `/projects/${projectId}/issues`, { token: user.token, body: { title } });
    assert.equal(res.statusCode, 201);
    return res.json().iid as number;
  };
  const editIssue = (user: TestUser, iid: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.api('PUT', `/projects/${projectId}/issues/${iid}`, { token: user.token, body, headers });

  it('an author below Reporter cannot make an issue an incident, as it could not open one', async () => {
    const create = await t.api('POST', `/projects/${projectId}/issues`, {
      token: outsider.token,
      body: { title: 'x', issue_type: 'incident' },
    });
    assert.equal(create.statusCode, 403);
    const iid = await openIssue(outsider);
    const edit = await editIssue(outsider, iid, { issue_type: 'incident' });
    assert.equal(edit.statusCode, 403);
    const issue = await t.api('GET', `/projects/${projectId}/issues/${iid}`, { token: outsider.token });
    assert.equal(issue.json().issue_type, 'issue');
    // The author still edits its issue otherwise.
    assert.equal((await editIssue(outsider, iid, { title: 'A clearer bug' })).statusCode, 200);
  });

  it('a Reporter makes an issue an incident', async () => {
    const iid = await openIssue(outsider);
    const edit = await editIssue(reporter, iid, { issue_type: 'incident' });
    assert.equal(edit.statusCode, 200);
    assert.equal(edit.json().issue_type, 'incident');
  });

  it('an issue edit whose title or description is spam is discarded as on creation; the issue stays as it was', async () => {
    const iid = await openIssue(owner, 'Fine title');
    const title = await editIssue(owner, iid, { title: 'Buy cheap pills' });
    assert.equal(title.statusCode, 400);
    assert.deepEqual(title.json(), DISCARDED('issue'));
    const links = Array.from({ length: 3 }, (_, i) => `https://example.com/${i}`).join(' ');
    const description = await editIssue(owner, iid, { description: links });
    assert.equal(description.statusCode, 400);
    const issue = await t.api('GET', `/projects/${projectId}/issues/${iid}`, { token: owner.token });
    assert.equal(issue.json().title, 'Fine title');
    assert.equal(issue.json().description, '');
    const logs = await t.database.handle.db.selectFrom('spam_logs').selectAll().where('user_id', '=', owner.user.id).execute();
    assert.equal(logs.filter((l) => l.noteable_type === 'Issue').length, 2);
    // A clean edit and a state change without new text pass.
    assert.equal((await editIssue(owner, iid, { title: 'Better title' })).statusCode, 200);
    assert.equal((await editIssue(owner, iid, { state_event: 'close' })).statusCode, 200);
  });

  it('a comment, new or edited, passes the spam check', async () => {
    const iid = await openIssue(owner);
    const notes = `/projects/${projectId}/issues/${iid}/notes`;
    const spam = await t.api('POST', notes, { token: owner.token, body: { body: 'cheap pills here' } });
    assert.equal(spam.statusCode, 400);
    assert.deepEqual(spam.json(), DISCARDED('note'));
    const clean = await t.api('POST', notes, { token: owner.token, body: { body: 'A fair remark' } });
    assert.equal(clean.statusCode, 201);
    const noteId = clean.json().id as number;
    const edit = await t.api('PUT', `${notes}/${noteId}`, { token: owner.token, body: { body: 'now cheap pills' } });
    assert.equal(edit.statusCode, 400);
    assert.deepEqual(edit.json(), DISCARDED('note'));
    const list = await t.api('GET', notes, { token: owner.token });
    assert.deepEqual(
      list.json().map((n: { body: string }) => n.body),
      ['A fair remark'],
    );
    const log = await t.database.handle.db
      .selectFrom('spam_logs')
      .selectAll()
      .where('noteable_type', '=', 'Note')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    assert.equal(log?.description, 'now cheap pills');
  });
});
