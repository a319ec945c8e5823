import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths } from '../helpers/chromium.js';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { enableTracking, envelope, envelopePath, exceptionEvent, hex32, sentryAuth, storePath } from '../helpers/sentry.js';

const skip = chromiumSkip;

/** Screenshots of the page at both widths; none may be wider than the screen. */
const shoot = (page: Page, name: string, wide: string[]) => shootAtWidths(page, 'error-tracking', name, wide);

/** Basalt listening on its own port (its EXTERNAL_URL), with a project whose error tracking is on. */
async function trackedServer(): Promise<{ t: TestApp; base: string; owner: TestUser; projectId: number; fullPath: string; key: string }> {
  const { t, base } = await listeningApp();
  const owner = await createUser(t.app);
  const project = await createProject(t.app, owner);
  const projectId = project.id;
  const { key } = await enableTracking(t, projectId, owner.token);
  return { t, base, owner, projectId, fullPath: project.full_path, key };
}

/** A developer triages errors in Chromium: list, filter, open, resolve, create an issue. */
describe('error list and error page in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let projectId: number;
  let fullPath: string;

  before(async () => {
    let key: string;
    ({ t, base, owner, projectId, fullPath, key } = await trackedServer());
    const tracked = { key };
    const send = async (event: Record<string, unknown>) => {
      const res = await fetch(`${base}${storePath(projectId)}`, {
        method: 'POST',
        headers: { 'x-sentry-auth': sentryAuth(tracked.key), 'content-type': 'application/json' },
        body: JSON.stringify(event),
      });
      assert.equal(res.status, 200);
    };
    await send(exceptionEvent({ user: { id: 'ann' } }));
    await send(exceptionEvent({ user: { id: 'bob' }, value: 'division by zero again' }));
    await send(exceptionEvent({ type: 'KeyError', value: "'cart'", fn: 'checkout', user: { id: 'ann' } }));
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t.close();
  });

  it('signs in, filters the list, opens an error, resolves it and creates an issue from it', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    const list = `${base}/${fullPath}/-/error_tracking`;
    await page.goto(list);
    // Anonymous: the sign-in page, which brings the browser back afterwards.
    assert.match(page.url(), /\/users\/sign_in\?redirect_to=/);
    await page.fill('#user_login', owner.user.username);
    await page.fill('#user_password', 'password-123');
    await Promise.all([page.waitForURL(list), page.click('#new_user button[type=submit]')]);
    await shoot(page, 'errors', wide);

    assert.equal(await page.locator('#errors tbody tr').count(), 2);
    assert.equal((await page.textContent('#error-total'))?.trim(), '2 errors');

    await page.fill('input[name=search]', 'keyerror');
    await Promise.all([page.waitForURL(/search=keyerror/), page.click('form.et-search button')]);
    assert.equal(await page.locator('#errors tbody tr').count(), 1);
    assert.match((await page.textContent('#errors tbody tr')) ?? '', /KeyError: 'cart'/);

    await page.fill('input[name=search]', '');
    await page.selectOption('select[name=sort]', 'frequency');
    await Promise.all([page.waitForURL(/sort=frequency/), page.click('form.et-search button')]);
    const first = page.locator('#errors tbody tr').first();
    assert.match((await first.textContent()) ?? '', /ZeroDivisionError: division by zero again/);
    assert.equal((await first.locator('td.events').textContent())?.trim(), '2');
    assert.equal((await first.locator('td.users').textContent())?.trim(), '2');

    await Promise.all([page.waitForURL(/\/-\/error_tracking\/\d+\/details$/), first.locator('a').click()]);
    await shoot(page, 'error', wide);
    assert.equal((await page.textContent('#occurrences'))?.trim(), '2');
    assert.equal((await page.textContent('#users-affected'))?.trim(), '2');
    assert.equal(await page.locator('#chart-24h rect').count(), 1, 'both events fall in the current hour');
    assert.equal(await page.getAttribute('#chart-30d', 'data-total'), '2');
    const inApp = page.locator('#stack-trace li.in-app');
    assert.equal(await inApp.count(), 1);
    assert.match((await inApp.textContent()) ?? '', /compute/);
    const highlighted = await inApp.evaluate((el) => getComputedStyle(el).borderLeftWidth);
    assert.equal(highlighted, '4px', 'in-app frames are highlighted');

    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Resolve' }).click()]);
    assert.equal((await page.textContent('#error-status'))?.trim(), 'resolved');
    assert.match((await page.textContent('.flash-notice')) ?? '', /resolved/);

    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create issue' }).click()]);
    assert.match((await page.textContent('#linked-issue')) ?? '', /#1/);
    assert.match((await page.textContent('.flash-notice')) ?? '', /Issue #1 was created from this error/);
    assert.equal(await page.locator('button:has-text("Create issue")').count(), 0);

    const issue = await t.api('GET', `/projects/${projectId}/issues/1`, { token: owner.token });
    assert.equal(issue.statusCode, 200);
    assert.match(issue.json().description, /at compute \(app\/views\.py:42\) \[in app\]/);
    assert.ok(issue.json().description.includes(page.url().replace(/\?.*$/, '')), 'the issue links back to the error page');

    // The resolved error left the default (unresolved) list; the former address leads there.
    await page.goto(`${base}/-/projects/${projectId}/errors`);
    assert.equal(page.url(), list);
    assert.equal(await page.locator('#errors tbody tr').count(), 1);
    assert.deepEqual(wide, []);
  });
});

/**
 * A browser SDK reports from the pages of the monitored application, another origin than
 * Basalt's: the collector must let such a page post and read the answer (CORS), both as a
 * simple request (text/plain, the key in the query) and with X-Sentry-Auth (a preflight).
 */
describe('the collector from a page on another origin in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let site: Server;
  let siteUrl: string;
  let browser: Browser;
  let projectId: number;
  let key: string;

  before(async () => {
    ({ t, base, projectId, key } = await trackedServer());
    // The monitored application: another port, so another origin.
    site = createHttpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><title>shop</title><p>shop</p>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const address = site.address();
    siteUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await t.close();
  });

  it('posts envelopes cross-origin and reads the answers; the errors are stored', async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(siteUrl);
    const body = (n: number, type: string) =>
      envelope({ event_id: hex32(n) }, [{ type: 'event', payload: exceptionEvent({ eventId: hex32(n), type }) }], false);
    // A string, not a function: tsx would wrap a function's inner arrows in a helper the page lacks.
    const url = `${base}${envelopePath(projectId)}`;
    const script = `(async () => {
      const read = (response) => response.text().then((body) => ({ status: response.status, body }));
      const first = await fetch(${JSON.stringify(`${url}?sentry_version=7&sentry_key=${key}`)}, {
        method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: ${JSON.stringify(body(1, 'TypeError'))},
      }).then(read);
      const second = await fetch(${JSON.stringify(url)}, {
        method: 'POST', headers: { 'x-sentry-auth': ${JSON.stringify(`Sentry sentry_version=7, sentry_key=${key}`)} },
        body: ${JSON.stringify(body(2, 'RangeError'))},
      }).then(read);
      const refused = await fetch(${JSON.stringify(`${url}?sentry_version=7&sentry_key=bset_00000000000000000000000000000000`)}, {
        method: 'POST', body: ${JSON.stringify(body(1, 'TypeError'))},
      }).then(read);
      return { first, second, refused };
    })()`;
    const answers = await page.evaluate<Record<'first' | 'second' | 'refused', { status: number; body: string }>>(script);
    assert.deepEqual(answers.first, { status: 200, body: JSON.stringify({ id: hex32(1) }) });
    assert.deepEqual(answers.second, { status: 200, body: JSON.stringify({ id: hex32(2) }) });
    assert.equal(answers.refused.status, 401, 'a refusal is readable too');
    const owner = await t.api('GET', `/projects/${projectId}/error_tracking/errors`);
    assert.deepEqual(
      owner
        .json<{ type: string }[]>()
        .map((e) => e.type)
        .sort(),
      ['RangeError', 'TypeError'],
    );
  });
});
