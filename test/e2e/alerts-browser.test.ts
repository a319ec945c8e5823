import assert from 'node:assert/strict';
import { chromiumSkip, freePort, launchChromium } from '../helpers/chromium.js';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { settle } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';

const skip = chromiumSkip;

/** A maintainer in Chromium: signs in, creates an integration, copies URL and key, sends a test alert. */
describe('alert integration settings page in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let projectId: number;

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ manualClock: false, env: { EXTERNAL_URL: base } });
    await settle(t);
    await t.app.listen({ host: '127.0.0.1', port });
    owner = await createUser(t.app);
    projectId = (await createProject(t.app, owner)).id;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t.close();
  });

  it('creates an integration, shows its URL and key once, and sends a test alert that appears in the list', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${base}/-/projects/${projectId}/settings/alerts`);
    assert.match(page.url(), /\/users\/sign_in\?redirect_to=/);
    await page.fill('#user_login', owner.user.username);
    await page.fill('#user_password', 'password-123');
    await Promise.all([page.waitForNavigation(), page.click('#new_user button[type=submit]')]);
    assert.equal(new URL(page.url()).pathname, `/-/projects/${projectId}/settings/alerts`);

    await page.fill('input[name=name]', 'Browser endpoint');
    await Promise.all([page.waitForNavigation(), page.click('text=Create integration')]);
    const url = (await page.textContent('#integration-url')) ?? '';
    const key = (await page.textContent('#integration-key')) ?? '';
    assert.match(url, new RegExp(`^${base}/.+/alerts/notify/browser-endpoint/[0-9a-f]{16}\\.json$`));
    assert.match(key, /^bsa_/);

    // The URL and key work for a monitoring tool.
    const posted = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: '{"title":"From curl"}',
    });
    assert.equal(posted.status, 200);

    await page.fill('textarea[name=payload]', '{"title":"Browser test alert","severity":"medium"}');
    await Promise.all([page.waitForNavigation(), page.click('text=Send test alert')]);
    assert.match((await page.textContent('.flash')) ?? '', /Test alert sent/);
    assert.equal(await page.locator('#integration-key').count(), 0, 'the key is not shown again');

    await Promise.all([page.waitForNavigation(), page.click('text=Browser test alert')]);
    assert.equal(await page.textContent('h1'), 'Alert #2: Browser test alert');
    assert.equal(await page.textContent('td[data-field=Severity]'), 'medium');
    await page.goto(`${base}/-/projects/${projectId}/alerts`);
    assert.equal(await page.locator('tbody tr').count(), 2);
  });
});
