import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths, signInThroughPage } from '../helpers/chromium.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { enableTracking } from '../helpers/sentry.js';

const skip = chromiumSkip;

/**
 * Issue 22's "DSN with a copy button" on Settings > Monitor, in Chromium with the pages' real
 * Content-Security-Policy: the one static script (src/web/basalt.js) shows the Copy buttons and
 * writes the clipboard; without script no button is shown; when the clipboard refuses, the field
 * is selected for the keyboard.
 */
describe('Copy buttons on Settings > Monitor in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let settings: string;
  const violations: string[] = [];

  before(async () => {
    ({ t, base } = await listeningApp());
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner);
    await enableTracking(t, project.id, owner.token);
    settings = `${base}/${project.full_path}/-/settings/operations`;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t.close();
  });

  /** A signed-in page on Settings > Monitor; every CSP refusal and page error is recorded. */
  async function settingsPage(options: { javaScriptEnabled?: boolean; clipboard?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: options.javaScriptEnabled ?? true });
    if (options.clipboard !== false) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (error) => violations.push(String(error)));
    await signInThroughPage(page, owner.user.username, settings);
    return page;
  }

  const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

  /** Clicks the button named `name` and answers what the clipboard then holds (a sentinel first, so a slow write is waited for). */
  async function copyWith(page: Page, name: string): Promise<string> {
    await page.evaluate(() => navigator.clipboard.writeText('(nothing copied)'));
    await page.getByRole('button', { name, exact: true }).click();
    for (let i = 0; i < 50; i++) {
      const text = await clipboard(page);
      if (text !== '(nothing copied)') return text;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return '(nothing copied)';
  }

  it('copies the DSN, a key’s DSN and an integration’s URL and key to the clipboard and says "Copied" for 2 s', async () => {
    const page = await settingsPage();
    const wide: string[] = [];
    const dsn = await page.getByLabel('DSN', { exact: true }).inputValue();
    assert.match(dsn, /^http:\/\/bset_[0-9a-f]{32}@127\.0\.0\.1:\d+\/errortracking\/api\/v1\/projects\/\d+$/);

    assert.ok(await page.getByRole('button', { name: 'Copy DSN', exact: true }).isVisible(), 'the script shows the button');
    assert.equal(await copyWith(page, 'Copy DSN'), dsn);
    const copied = page.locator('#error-tracking-settings .copy-status').first();
    await copied.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await copied.getAttribute('aria-live'), 'polite');
    await shootAtWidths(page, 'copy-buttons', 'dsn-copied', wide);
    // The feedback goes away after 2 s (bounded wait).
    await copied.getByText('Copied', { exact: true }).waitFor({ state: 'detached', timeout: 5_000 });

    // A second key: each key's DSN has its own button, and copies that key's DSN.
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create key', exact: true }).click()]);
    const keyDsns = await page.locator('.et-key-dsn').allTextContents();
    assert.equal(keyDsns.length, 2);
    assert.notEqual(keyDsns[0], keyDsns[1]);
    const oldKey = (await page.locator('.et-public-key').first().textContent()) ?? '';
    assert.equal(await copyWith(page, `Copy DSN of key ${oldKey.slice(0, 13)}…`), keyDsns[0]);
    await page.locator('#client-keys .copy-status').getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('DSN', { exact: true }).inputValue(), keyDsns[1], 'the field shows the newest key’s DSN');
    assert.equal(await copyWith(page, 'Copy DSN'), keyDsns[1]);

    // An alert integration's URL and key, shown once after it is created, and its webhook URL in the list.
    await page.getByLabel('Name', { exact: true }).fill('Pager endpoint');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Create integration', exact: true }).click()]);
    const url = (await page.textContent('#integration-url')) ?? '';
    const key = (await page.textContent('#integration-key')) ?? '';
    assert.match(key, /^bsa_/);
    assert.equal(await copyWith(page, 'Copy authorization key'), key);
    await page.locator('#created-integration .copy-status').getByText('Copied', { exact: true }).first().waitFor();
    assert.equal(await copyWith(page, 'Copy URL'), url);
    assert.equal(await copyWith(page, 'Copy webhook URL of Pager endpoint'), url);
    await shootAtWidths(page, 'copy-buttons', 'integration-copied', wide);

    assert.deepEqual(wide, []);
    assert.deepEqual(violations, [], 'the policy lets the script run and refuses nothing the page uses');
  });

  it('without script no Copy button is shown; the DSN field is still there to select', async () => {
    const page = await settingsPage({ javaScriptEnabled: false });
    const wide: string[] = [];
    assert.match(await page.getByLabel('DSN', { exact: true }).inputValue(), /^http:\/\/bset_/);
    assert.ok(
      (await page.locator('button[data-copy-target], button[data-copy]').count()) >= 4,
      'drawn (the DSN, the keys’, the webhook URL)…',
    );
    assert.equal(await page.getByRole('button', { name: /^Copy/ }).count(), 0, '…but hidden');
    assert.equal(await page.getByText('Copied', { exact: true }).count(), 0);
    await shootAtWidths(page, 'copy-buttons', 'no-script', wide);
    assert.deepEqual(wide, []);
  });

  it('when the clipboard refuses, the DSN is selected and the page says to press Ctrl+C', async () => {
    const page = await settingsPage({ clipboard: false });
    // The browser refuses both ways of writing the clipboard (as without permission or over plain http).
    // A string, not a function: tsx would wrap a function's inner arrows in a helper the page lacks.
    await page.evaluate(`
      Object.defineProperty(navigator.clipboard, 'writeText', { value: () => Promise.reject(new DOMException('denied', 'NotAllowedError')) });
      document.execCommand = () => false;
    `);
    const dsn = await page.getByLabel('DSN', { exact: true }).inputValue();
    await page.getByRole('button', { name: 'Copy DSN', exact: true }).click();
    await page.getByText('Press Ctrl+C to copy', { exact: true }).waitFor();
    const selection = await page.evaluate(() => {
      const field = document.getElementById('dsn') as HTMLInputElement;
      return { focused: document.activeElement === field, text: field.value.slice(field.selectionStart ?? 0, field.selectionEnd ?? 0) };
    });
    assert.deepEqual(selection, { focused: true, text: dsn });
    await shootAtWidths(page, 'copy-buttons', 'copy-refused', []);
  });
});
