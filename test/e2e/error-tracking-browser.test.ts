import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer as createHttpServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths, signInThroughPage } from '../helpers/chromium.js';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { enableTracking, envelope, envelopePath, exceptionEvent, hex32 } from '../helpers/sentry.js';

const skip = chromiumSkip;
const here = path.dirname(fileURLToPath(import.meta.url));

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

/** The real @sentry/node SDK sends with `dsn` (test/e2e/fixtures/sentry-node-pages-client.mjs). */
function runSdk(dsn: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, 'fixtures', 'sentry-node-pages-client.mjs')], {
      cwd: path.resolve(here, '..', '..'),
      env: { ...process.env, SENTRY_DSN: dsn },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * Issue 22 through the real pages only: a Maintainer enables error tracking on Settings >
 * Monitor and reads the DSN there, the real @sentry/node SDK sends with it, the error is found,
 * its events stepped through (a breadcrumb, a tag), an issue created from it and the links
 * followed both ways; a key is rotated on the page; a Reporter reads without actions.
 */
describe('error tracking through the pages in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let reporter: TestUser;
  let fullPath: string;

  before(async () => {
    ({ t, base } = await listeningApp());
    owner = await createUser(t.app);
    reporter = await createUser(t.app);
    const project = await createProject(t.app, owner);
    fullPath = project.full_path;
    await addMember(t.app, 'project', project.id, reporter, 20);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t.close();
  });

  const signIn = (page: Page, user: TestUser, to: string) => signInThroughPage(page, user.user.username, to);

  it('enable, read the DSN, send with @sentry/node, find the error, step through events, create an issue, rotate a key; a Reporter reads', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    const list = `${base}/${fullPath}/-/error_tracking`;
    await signIn(page, owner, list);
    assert.match((await page.textContent('#no-errors')) ?? '', /No errors yet/);
    await shoot(page, 'errors-empty', wide);

    // The empty list leads to the DSN: Settings > Monitor, where error tracking is switched on.
    await Promise.all([
      page.waitForURL(/\/-\/settings\/operations/),
      page.getByRole('link', { name: 'Get the DSN and setup snippets' }).click(),
    ]);
    assert.equal((await page.textContent('#error-tracking-state'))?.trim(), 'disabled');
    await page.getByLabel('Active (integrated error tracking)').check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save changes' }).click()]);
    assert.equal((await page.textContent('#error-tracking-state'))?.trim(), 'enabled');
    assert.ok(await page.getByLabel('Active (integrated error tracking)').isChecked());
    const dsn = await page.getByLabel('DSN', { exact: true }).inputValue();
    assert.match(dsn, /^http:\/\/bset_[0-9a-f]{32}@127\.0\.0\.1:\d+\/errortracking\/api\/v1\/projects\/\d+$/);
    assert.match((await page.textContent('#snippet-node')) ?? '', new RegExp(`dsn: '${dsn.replaceAll('.', '\\.')}'`));
    await shoot(page, 'settings', wide);

    const sent = await runSdk(dsn);
    assert.equal(sent.code, 0, sent.output);

    // Find the error: the list, searched.
    await page.goto(list);
    await page.getByLabel('Search').fill('PaymentDeclined');
    await Promise.all([page.waitForURL(/search=PaymentDeclined/), page.getByRole('button', { name: 'Apply' }).click()]);
    const row = page.locator('#errors tbody tr');
    assert.equal(await row.count(), 1);
    assert.equal((await row.locator('td.events').textContent())?.trim(), '3');
    assert.equal((await row.locator('td.users').textContent())?.trim(), '3');
    assert.equal(await row.locator('svg.et-spark rect').count(), 1, 'the three events fall in the current hour');
    await shoot(page, 'errors', wide);
    await Promise.all([page.waitForURL(/\/-\/error_tracking\/\d+\/details$/), row.locator('a').first().click()]);
    const errorUrl = page.url();
    assert.match((await page.textContent('#error-title')) ?? '', /PaymentDeclinedError: card declined/);
    assert.equal((await page.textContent('#occurrences'))?.trim(), '3');
    assert.equal(await page.locator('#chart-24h g.et-bar').count(), 24);
    assert.equal(await page.locator('#chart-30d g.et-bar').count(), 30);
    assert.equal(await page.getAttribute('#chart-24h', 'data-total'), '3');
    assert.match((await page.locator('#app-frames li').first().textContent()) ?? '', /chargeCard/);
    assert.equal(await page.locator('#library-frames').getAttribute('open'), null, 'library frames start folded');
    // The latest event: its breadcrumb, its tag, its user, its SDK.
    assert.match((await page.textContent('#breadcrumbs')) ?? '', /added item 3 to the cart/);
    assert.match((await page.textContent('#tags')) ?? '', /checkout_step: payment/);
    assert.match((await page.textContent('#event-user')) ?? '', /carol/);
    assert.match((await page.textContent('#event-sdk')) ?? '', /sentry\.javascript\.node \d+\./);
    const latestId = await page.getAttribute('#event', 'data-event-id');
    await shoot(page, 'error', wide);

    // Step through the events: older twice, then newer, then latest, then one by its id.
    await Promise.all([page.waitForURL(/event=/), page.getByRole('link', { name: '← Older' }).click()]);
    assert.match((await page.textContent('#breadcrumbs')) ?? '', /added item 2 to the cart/);
    const middleId = await page.getAttribute('#event', 'data-event-id');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: '← Older' }).click()]);
    assert.match((await page.textContent('#event-user')) ?? '', /alice/);
    assert.equal(await page.getByRole('link', { name: '← Older' }).count(), 0, 'the first event has none older');
    await shoot(page, 'error-oldest-event', wide);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Newer →' }).click()]);
    assert.equal(await page.getAttribute('#event', 'data-event-id'), middleId);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Latest', exact: true }).click()]);
    assert.equal(await page.getAttribute('#event', 'data-event-id'), latestId);
    await page.getByLabel('Event ID').fill(middleId!);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Show event' }).click()]);
    assert.equal(await page.getAttribute('#event', 'data-event-id'), middleId);

    // Create an issue from it and follow the links both ways.
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create issue' }).click()]);
    assert.match((await page.textContent('.flash-notice')) ?? '', /Issue #1 was created from this error/);
    await Promise.all([page.waitForURL(/\/-\/issues\/1$/), page.locator('#linked-issue a').click()]);
    assert.match((await page.textContent('main')) ?? '', /PaymentDeclinedError/);
    await shoot(page, 'issue-from-error', wide);
    await Promise.all([page.waitForURL(errorUrl), page.locator(`#issue-origins a[href$="${new URL(errorUrl).pathname}"]`).click()]);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Resolve' }).click()]);
    assert.equal((await page.textContent('#error-status'))?.trim(), 'resolved');

    // Release health: the SDK's session of its release.
    await page.goto(`${list}/releases`);
    assert.match((await page.textContent('#releases')) ?? '', /shop@1\.2\.0\s*e2e/);
    await shoot(page, 'releases', wide);

    // Rotate the key on the page: create a new one (its DSN becomes the one shown), revoke the old.
    await page.goto(`${base}/${fullPath}/-/settings/operations`);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create key' }).click()]);
    const rotated = await page.getByLabel('DSN', { exact: true }).inputValue();
    assert.notEqual(rotated, dsn);
    assert.equal(await page.locator('#client-keys li').count(), 2);
    const old = page.locator('#client-keys li').first();
    await old.locator('summary', { hasText: 'Revoke' }).click();
    await shoot(page, 'settings-revoke', wide);
    await Promise.all([page.waitForNavigation(), old.getByRole('button', { name: /^Revoke key/ }).click()]);
    assert.match((await page.textContent('.flash-notice')) ?? '', /was revoked/);
    assert.equal(await page.locator('#client-keys li').count(), 1);
    assert.equal((await runSdk(dsn)).code, 0, 'the SDK gives up quietly');
    await page.goto(`${list}?status=all`);
    assert.equal((await page.textContent('#errors td.events'))?.trim(), '3', "the revoked key's events were refused");

    // A Reporter reads the error pages without any action.
    const theirs = await (await browser.newContext()).newPage();
    await signIn(theirs, reporter, `${list}?status=all`);
    await Promise.all([theirs.waitForURL(errorUrl), theirs.locator('#errors tbody tr a').first().click()]);
    assert.equal(await theirs.locator('#error-actions').count(), 0);
    assert.equal(await theirs.getByRole('button', { name: 'Create issue' }).count(), 0);
    assert.match((await theirs.textContent('#tags')) ?? '', /checkout_step/);
    await shoot(theirs, 'error-as-reporter', wide);
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
