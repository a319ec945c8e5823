import assert from 'node:assert/strict';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths } from '../helpers/chromium.js';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { settle } from '../helpers/alerts.js';
import type { TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';

const skip = chromiumSkip;

/** Screenshots of the page at both widths; none may be wider than the screen. */
const shoot = (page: Page, name: string, wide: string[]) => shootAtWidths(page, 'alerts', name, wide);

/** A maintainer in Chromium: signs in, creates an integration on Settings > Monitor, copies URL and key, sends a test alert. */
describe('Settings > Monitor and Monitor > Alerts in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let fullPath: string;

  before(async () => {
    ({ t, base } = await listeningApp());
    await settle(t);
    owner = await createUser(t.app);
    fullPath = (await createProject(t.app, owner)).full_path;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t.close();
  });

  it('creates an integration, shows its URL and key once, and sends a test alert that appears in the list', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    await page.goto(`${base}/${fullPath}/-/alert_management`);
    assert.match(page.url(), /\/users\/sign_in\?redirect_to=/);
    await page.fill('#user_login', owner.user.username);
    await page.fill('#user_password', 'password-123');
    await Promise.all([page.waitForNavigation(), page.click('#new_user button[type=submit]')]);
    assert.equal(new URL(page.url()).pathname, `/${fullPath}/-/alert_management`);

    // The empty list leads to the settings page.
    await shoot(page, 'alerts-empty', wide);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Add an integration' }).click()]);
    assert.equal(new URL(page.url()).pathname, `/${fullPath}/-/settings/operations`);

    await page.getByLabel('Name').fill('Browser endpoint');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create integration' }).click()]);
    const url = (await page.textContent('#integration-url')) ?? '';
    const key = (await page.textContent('#integration-key')) ?? '';
    assert.match(url, new RegExp(`^${base}/.+/alerts/notify/browser-endpoint/[0-9a-f]{16}\\.json$`));
    assert.match(key, /^bsa_/);
    await shoot(page, 'settings-created', wide);

    // The URL and key work for a monitoring tool.
    const posted = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: '{"title":"From curl"}',
    });
    assert.equal(posted.status, 200);

    // Invalid JSON: the message beside the box, what was typed kept.
    const payload = page.getByLabel('Test payload for Browser endpoint');
    await payload.fill('{"title": "Browser test alert",');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send test alert' }).click()]);
    assert.match((await page.textContent('.field-error')) ?? '', /not valid JSON/);
    assert.equal(await page.getByLabel('Test payload for Browser endpoint').inputValue(), '{"title": "Browser test alert",');
    await shoot(page, 'settings-invalid-json', wide);

    await page.getByLabel('Test payload for Browser endpoint').fill('{"title":"Browser test alert","severity":"medium"}');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send test alert' }).click()]);
    assert.match((await page.textContent('.flash')) ?? '', /Test alert sent/);
    assert.equal(await page.locator('#integration-key').count(), 0, 'the key is not shown again');
    await shoot(page, 'settings', wide);

    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Alerts', exact: true }).first().click()]);
    assert.equal(new URL(page.url()).pathname, `/${fullPath}/-/alert_management`);
    assert.equal(await page.locator('tbody tr').count(), 2);
    await shoot(page, 'alerts', wide);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Browser test alert' }).click()]);
    assert.equal(new URL(page.url()).pathname, `/${fullPath}/-/alert_management/2/details`);
    assert.equal(await page.textContent('h1'), 'Alert #2: Browser test alert');
    assert.equal(await page.textContent('dd[data-field=Severity]'), 'medium');
    await page.getByLabel('Status').selectOption('acknowledged');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Change status' }).click()]);
    assert.equal(await page.textContent('dd[data-field=Status]'), 'acknowledged');
    assert.match((await page.textContent('.flash')) ?? '', /Status changed to acknowledged/);
    await shoot(page, 'alert', wide);

    // The same page switches error tracking on and shows the DSN to give an SDK.
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Settings', exact: true }).click()]);
    await page.getByLabel('Active (integrated error tracking)').check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save changes' }).click()]);
    assert.match((await page.textContent('.flash')) ?? '', /Error tracking is enabled/);
    assert.equal(await page.textContent('#error-tracking-state'), 'enabled');
    const dsn = await page.getByLabel('DSN', { exact: true }).inputValue();
    assert.match(dsn, new RegExp(`^http://bset_[0-9a-f]{32}@127\\.0\\.0\\.1:\\d+/errortracking/api/v1/projects/\\d+$`));
    await shoot(page, 'settings-error-tracking', wide);
    assert.deepEqual(wide, []);
  });
});
