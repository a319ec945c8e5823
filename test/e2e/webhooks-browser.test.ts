import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths } from '../helpers/chromium.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const shoot = (page: Page, name: string, wide: string[]) => shootAtWidths(page, 'webhooks', name, wide);

/** A maintainer in Chromium: adds a webhook on Settings > Webhooks, tests it, reads the delivery. */
describe('Settings > Webhooks in Chromium', { skip: chromiumSkip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let fullPath: string;
  const receiver = new WebhookReceiver();

  before(async () => {
    await receiver.start();
    ({ t, base } = await listeningApp({ env: { WEBHOOK_ALLOW_LOCAL_NETWORK: 'true' } }));
    owner = await createUser(t.app);
    fullPath = (await createProject(t.app, owner)).full_path;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t.close();
    await receiver.stop();
  });

  it('adds a hook, sends a test, and shows the delivery; no page is wider than the screen', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    await page.goto(`${base}/${fullPath}/-/hooks`);
    await page.fill('#user_login', owner.user.username);
    await page.fill('#user_password', 'password-123');
    await Promise.all([page.waitForNavigation(), page.click('#new_user button[type=submit]')]);
    assert.equal(new URL(page.url()).pathname, `/${fullPath}/-/hooks`);
    await shoot(page, 'hooks-empty', wide);

    await page.getByLabel('URL', { exact: true }).fill(`${receiver.url}/browser`);
    await page.getByLabel('Name (optional)').fill('Deploy bot');
    await page.getByLabel('Secret token').fill('browser-secret');
    await page.getByLabel('Issues events', { exact: true }).check();
    await page.getByLabel('Tag push events').check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Add webhook' }).click()]);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Test push events' }).click()]);
    assert.match((await page.textContent('.flash')) ?? '', /Hook executed successfully: HTTP 200/);
    assert.equal(receiver.take('Push Hook').length, 1);
    await shoot(page, 'hooks-list', wide);

    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Edit' }).click()]);
    await shoot(page, 'hook-edit', wide);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'View details' }).first().click()]);
    assert.match((await page.textContent('#request-headers')) ?? '', /Push Hook/);
    await shoot(page, 'hook-log', wide);
    assert.deepEqual(wide, []);
  });
});
