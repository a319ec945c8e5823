import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { settle } from '../helpers/alerts.js';
import type { TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths, signInThroughPage } from '../helpers/chromium.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

const shoot = (page: Page, name: string, wide: string[]) => shootAtWidths(page, 'alerts-integrations', name, wide);

/**
 * A Maintainer sets up alerts on Settings > Monitor in Chromium: an HTTP integration made,
 * used with the key the page shows, switched off, re-keyed and deleted; a custom mapping from a
 * sample payload feeds a test alert; a Reporter is refused both pages.
 */
describe('Settings > Monitor alert integrations and custom mapping in Chromium', { skip: chromiumSkip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let reporter: TestUser;
  let fullPath: string;

  before(async () => {
    ({ t, base } = await listeningApp());
    await settle(t);
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
  const post = (url: string, key: string, body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
  const click = async (page: Page, name: string) => {
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name, exact: true }).click()]);
  };
  const follow = async (page: Page, name: string) => {
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name, exact: true }).first().click()]);
  };

  it('creates, uses, deactivates, re-keys and deletes an HTTP integration; maps a sample; a Reporter is refused', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    const settings = `${base}/${fullPath}/-/settings/operations`;
    await signIn(page, owner, settings);

    await page.getByLabel('Name', { exact: true }).fill('Pager endpoint');
    await click(page, 'Create integration');
    const url = (await page.textContent('#integration-url')) ?? '';
    const key = (await page.textContent('#integration-key')) ?? '';
    assert.match(key, /^bsa_/);
    assert.equal((await post(url, key, { title: 'First from outside' })).status, 200);
    await shoot(page, 'settings-created', wide);

    // Edit: switched off, posts are refused.
    await page.getByText('Edit Pager endpoint').click();
    await page.getByLabel('Pager endpoint is active').uncheck();
    await click(page, 'Save Pager endpoint');
    assert.match((await page.textContent('.flash')) ?? '', /saved \(inactive\)/);
    assert.equal(await page.textContent('[data-integration] .badge'), 'Inactive');
    assert.notEqual((await post(url, key, { title: 'While inactive' })).status, 200);
    await page.getByText('Edit Pager endpoint').click();
    await page.getByLabel('Pager endpoint is active').check();
    await click(page, 'Save Pager endpoint');
    assert.equal((await post(url, key, { title: 'Active again' })).status, 200);

    // Reset the key after a confirmation: the old one is refused, the new one shown once works.
    await follow(page, 'Reset key');
    await shoot(page, 'reset-confirm', wide);
    await click(page, 'Reset key');
    const newKey = (await page.textContent('#integration-key')) ?? '';
    assert.match(newKey, /^bsa_/);
    assert.notEqual(newKey, key);
    assert.notEqual((await post(url, key, { title: 'Old key' })).status, 200);
    assert.equal((await post(url, newKey, { title: 'New key' })).status, 200);
    await shoot(page, 'reset-key', wide);

    // Custom mapping on its own page: invalid JSON is refused beside the kept input.
    await page.goto(settings);
    await follow(page, 'Custom field mapping');
    await shoot(page, 'mapping-empty', wide);
    await page.getByLabel('Sample payload').fill('{"alerts": [');
    await click(page, 'Save sample');
    assert.match((await page.textContent('.field-error')) ?? '', /not valid JSON/);
    assert.equal(await page.getByLabel('Sample payload').inputValue(), '{"alerts": [');
    await shoot(page, 'mapping-invalid', wide);
    const sample = { alerts: [{ summary: { headline: 'Queue backed up' }, level: 'high', labels: { host: 'q-1' } }], version: '1' };
    await page.getByLabel('Sample payload').fill(JSON.stringify(sample));
    await click(page, 'Save sample');
    await page.getByLabel('Title', { exact: true }).selectOption({ label: 'summary.headline = Queue backed up' });
    await page.getByLabel('Severity', { exact: true }).selectOption({ label: 'level = high' });
    await click(page, 'Save mapping');
    assert.match((await page.textContent('.flash')) ?? '', /Mapping saved: 2 fields/);
    await shoot(page, 'mapping', wide);

    // A test alert through the mapping: title and severity come from the mapped paths.
    await page.goto(settings);
    await page
      .getByLabel('Test payload for Pager endpoint')
      .fill(JSON.stringify({ alerts: [{ summary: { headline: 'Mapped headline' }, level: 'low', labels: { host: 'q-2' } }] }));
    await click(page, 'Send test alert');
    assert.match((await page.textContent('.flash')) ?? '', /Mapped headline/);
    await page.goto(`${base}/${fullPath}/-/alert_management`);
    const row = page.locator('tbody tr', { hasText: 'Mapped headline' });
    assert.equal(await row.locator('.severity').textContent(), 'low');
    await shoot(page, 'alerts', wide);
    await Promise.all([page.waitForNavigation(), row.getByRole('link', { name: 'Mapped headline' }).click()]);
    await shoot(page, 'alert', wide);

    // A new sample clears the mapping.
    await page.goto(settings);
    await follow(page, 'Custom field mapping');
    await page.getByLabel('Sample payload').fill('{"headline": "Another shape"}');
    await click(page, 'Save sample');
    assert.equal(await page.getByLabel('Title', { exact: true }).inputValue(), '');
    assert.equal(await page.getByLabel('Severity', { exact: true }).inputValue(), '');

    // Delete after a confirmation: the URL stops accepting alerts.
    await page.goto(settings);
    await follow(page, 'Delete');
    await shoot(page, 'delete-confirm', wide);
    await click(page, 'Delete integration');
    assert.match((await page.textContent('.flash')) ?? '', /Integration Pager endpoint deleted/);
    assert.equal(await page.locator('[data-integration]').count(), 0);
    assert.notEqual((await post(url, newKey, { title: 'After delete' })).status, 200);
    await shoot(page, 'settings-after-delete', wide);

    // A Reporter gets the 403 page on the alerts and the settings.
    const theirs = await (await browser.newContext()).newPage();
    const alerts = `${base}/${fullPath}/-/alert_management`;
    await theirs.goto(alerts);
    await theirs.fill('#user_login', reporter.user.username);
    await theirs.fill('#user_password', 'password-123');
    const [answer] = await Promise.all([theirs.waitForResponse((r) => r.url() === alerts), theirs.click('#new_user button[type=submit]')]);
    assert.equal(answer.status(), 403);
    assert.match((await theirs.textContent('main')) ?? '', /Developer role/);
    await shoot(theirs, 'reporter-alerts-403', wide);
    const refused = await theirs.goto(settings);
    assert.equal(refused?.status(), 403);
    assert.match((await theirs.textContent('main')) ?? '', /Maintainer role/);
    await shoot(theirs, 'reporter-settings-403', wide);
    assert.deepEqual(wide, []);
  });
});
