import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

/**
 * Kept page views (VersionCache) stay valid while the database's data version reads the same.
 * Several reads of it share one (in a turn, in a request): these tests check that sharing
 * never hides a write, from this process or another one on the same database.
 */
describe('kept views and the shared data version', () => {
  let t: TestApp;
  let other: TestApp;
  let dana: TestUser;
  before(async () => {
    t = await createTestApp({ manualClock: false });
    other = await createTestApp({ manualClock: false, sameDatabaseAs: t });
    dana = await createUser(t.app, { username: 'dana' });
  });
  after(async () => {
    await other.close();
    await t.close();
  });

  it('a request keeps its read until this process writes; a write ends it at once', async () => {
    const database = t.database.handle;
    const request = {};
    const first = await database.dataVersion(request);
    await nextTurn();
    assert.equal(await database.dataVersion(request), first, 'nothing was written: the same version');
    await createProject(t.app, dana);
    const after = await database.dataVersion(request);
    assert.notEqual(after, first, 'a write of this process moves the version the request reads next');
    // A fresh read (another request) sees the write too. On PostgreSQL the snapshot is the whole
    // database's, which other suites running beside this one move further: not the version before it.
    await nextTurn();
    assert.notEqual(await database.dataVersion({}), first);
  });

  it('a commit of another process moves the version read in a later turn', async () => {
    const before = await t.database.handle.dataVersion();
    await createProject(other.app, dana);
    await nextTurn();
    assert.notEqual(await t.database.handle.dataVersion(), before);
  });

  it('a project page kept by one process shows what another process wrote before the next view', async () => {
    const owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    await addMember(t.app, 'project', project.id, dana, 30);
    const browser = new TestBrowser(t.app);
    assert.equal((await browser.signIn('dana', 'password-123')).statusCode, 303);
    const path = `/${project.full_path}`;
    const before = await browser.request('GET', path);
    assert.equal(before.statusCode, 200);
    assert.doesNotMatch(before.body, /Written elsewhere/);
    // Kept now: the second view is the kept one.
    assert.equal((await browser.request('GET', path)).body, before.body);
    const issue = await other.api('POST', `/projects/${project.id}/issues`, { body: { title: 'Written elsewhere' } });
    assert.equal(issue.statusCode, 201);
    const [overview, issues] = await Promise.all([browser.request('GET', path), browser.request('GET', `${path}/-/issues`)]);
    assert.notEqual(overview.body, before.body, 'the kept overview was drawn again');
    assert.match(issues.body, /Written elsewhere/);
  });

  it('a sign-out through another process ends the session kept by this one', async () => {
    const browser = new TestBrowser(t.app);
    assert.equal((await browser.signIn('dana', 'password-123')).statusCode, 303);
    assert.equal((await browser.request('GET', '/')).statusCode, 200);
    // The same cookie, signed out through the other process.
    const elsewhere = new TestBrowser(other.app);
    for (const [name, value] of browser.cookies) elsewhere.cookies.set(name, value);
    const out = await elsewhere.request('POST', '/users/sign_out', { form: { authenticity_token: await elsewhere.csrf() } });
    assert.ok([302, 303].includes(out.statusCode), `sign-out answered ${out.statusCode}`);
    const home = await browser.request('GET', '/');
    assert.equal(home.statusCode, 302, 'the kept session is gone');
    assert.equal(home.headers.location, '/users/sign_in');
  });
});
