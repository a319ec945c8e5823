import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { renameTable } from '../helpers/database.js';
import type { TestUser } from '../helpers/factories.js';
import { exceptionEvent, post, sentryAuth, storePath, type TrackedProject, trackedProject } from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

/**
 * A lookup answers "not found" only when the row is absent: a failure of the database is a
 * failure (500), never the "This error does not exist" page (issue 20 item 1).
 */
describe('error tracking lookups: a database failure is not "not found"', () => {
  let t: TestApp;
  let owner: TestUser;
  let p: TrackedProject;
  before(async () => {
    ({ t, owner } = await appWithUsers(['owner']));
    p = await trackedProject(t, owner);
    await post(t, storePath(p.projectId), JSON.stringify(exceptionEvent({})), { 'x-sentry-auth': sentryAuth(p.key) });
  });
  after(() => t.close());

  it('the error page and its forms answer 500 when the errors table cannot be read, 404 for an absent error', async () => {
    const browser = new TestBrowser(t.app);
    await browser.signIn(owner.user.username, 'password-123');
    const list = await t.api('GET', `/projects/${p.projectId}/error_tracking/errors`, { token: owner.token });
    const id = list.json<{ id: number }[]>()[0]?.id;
    assert.ok(id);
    const fullPath = (await t.api('GET', `/projects/${p.projectId}`)).json().path_with_namespace;
    const href = `/${fullPath}/-/error_tracking/${id}/details`;
    const page = await browser.request('GET', href);
    assert.equal(page.statusCode, 200);
    const token = TestBrowser.csrfOf(page.body);
    assert.equal((await browser.request('GET', `/${fullPath}/-/error_tracking/${id + 1000}/details`)).statusCode, 404);

    await renameTable(t.database, 'error_tracking_errors', 'error_tracking_errors_away');
    try {
      const failed = await browser.request('GET', href);
      assert.equal(failed.statusCode, 500);
      assert.doesNotMatch(failed.body, /does not exist/);
      const posted = await browser.request('POST', `${href}/status`, { form: { status: 'resolved', authenticity_token: token } });
      assert.equal(posted.statusCode, 500);
      assert.doesNotMatch(posted.body, /does not exist/);
    } finally {
      await renameTable(t.database, 'error_tracking_errors_away', 'error_tracking_errors');
    }
  });
});
