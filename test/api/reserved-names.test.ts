import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIntegration, notify, settle } from '../helpers/alerts.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';

/** Opens an incident through a generic integration with create_issue on; answers the issue's author. */
async function incidentAuthor(t: TestApp, owner: TestUser, title: string): Promise<{ id: number; username: string }> {
  const project = await createProject(t.app, owner);
  const integration = await createIntegration(t, project.id, { name: 'generic' });
  const settings = await t.api('PUT', `/projects/${project.id}/alert_management/settings`, { body: { create_issue: true } });
  assert.equal(settings.statusCode, 200);
  const ingested = await notify(t, integration.url, { title }, { key: integration.token });
  assert.equal(ingested.statusCode, 200, ingested.body);
  const alert = (await t.api('GET', `/projects/${project.id}/alert_management/alerts/${ingested.json()[0].iid}`)).json();
  assert.equal(typeof alert.issue_iid, 'number');
  const issue = (await t.api('GET', `/projects/${project.id}/issues/${alert.issue_iid}`)).json();
  assert.equal(issue.issue_type, 'incident');
  return issue.author;
}

describe('no system feature depends on a name a user can take', () => {
  let t: TestApp;
  let user: TestUser;
  before(async () => {
    t = await createTestApp();
    await settle(t);
    user = await createUser(t.app);
  });
  after(() => t.close());

  it('the alert bot exists from start-up, before anyone acts', async () => {
    const found = await t.api('GET', '/users?username=alert-bot');
    assert.equal(found.statusCode, 200);
    assert.equal(found.json().length, 1);
    assert.equal(found.json()[0].bot, true);
    assert.equal(found.json()[0].name, 'Alert Bot');
  });

  it('a top-level group may not take the alert bot name, in any case; a subgroup may', async () => {
    for (const path of ['alert-bot', 'Alert-Bot']) {
      const res = await t.api('POST', '/groups', { token: user.token, body: { name: 'Alerts', path } });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { message: { path: ['is a reserved name'] } });
    }
    const group = await t.api('POST', '/groups', { token: user.token, body: { name: 'Ops', path: `ops${Date.now().toString(36)}` } });
    assert.equal(group.statusCode, 201);
    const renamed = await t.api('PUT', `/groups/${group.json().id}`, { token: user.token, body: { path: 'alert-bot' } });
    assert.equal(renamed.statusCode, 400);
    assert.deepEqual(renamed.json(), { message: { path: ['is a reserved name'] } });
    const sub = await t.api('POST', '/groups', { token: user.token, body: { name: 'bot', path: 'alert-bot', parent_id: group.json().id } });
    assert.equal(sub.statusCode, 201);
  });

  it('an administrator may not create a user named alert-bot', async () => {
    const res = await t.api('POST', '/users', {
      body: { username: 'alert-bot', name: 'Impostor', email: 'impostor@example.com', password: 'password-123', bot: true },
    });
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), { message: { username: ['is a reserved name'] } });
  });

  it('alert ingestion opens incidents as the bot after those attempts', async () => {
    const author = await incidentAuthor(t, user, 'Disk full');
    assert.equal(author.username, 'alert-bot');
  });
});

describe('internal users on a database where the name was taken before it was reserved', () => {
  let t: TestApp;
  const others: TestApp[] = [];
  before(async () => {
    t = await createTestApp();
    await settle(t);
    // As an instance before this change: no record of the bot, and `alert-bot` held by a person.
    const db = t.database.handle.db;
    await db.deleteFrom('instance_settings').where('key', '=', 'internal_user.alert_bot').execute();
    await db
      .updateTable('users')
      .set({ bot: 0, email: 'person@example.com', email_lower: 'person@example.com' })
      .where('username', '=', 'alert-bot')
      .execute();
  });
  after(async () => {
    for (const other of others) await other.close();
    await t.close();
  });

  it('processes starting together create one bot under the next free name and never act as the person', async () => {
    // On PostgreSQL the two start at once. SQLite's driver waits for a lock synchronously, so two
    // handles in one thread would wait on each other: there they start one after the other.
    const start = () => createTestApp({ sameDatabaseAs: t }).then((other) => (others.push(other), other));
    const [first] = t.database.databaseUrl ? await Promise.all([start(), start()]) : [await start(), await start()];
    assert.ok(first);
    const bots = await t.database.handle.db
      .selectFrom('users')
      .select(['id', 'username'])
      .where('username_lower', 'like', 'alert-bot%')
      .execute();
    assert.deepEqual(bots.map((b) => b.username).sort(), ['alert-bot', 'alert-bot1']);
    const owner = await createUser(first.app);
    const author = await incidentAuthor(first, owner, 'CPU hot');
    assert.equal(author.username, 'alert-bot1');
  });
});
