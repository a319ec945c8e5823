import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';

/** Debian's Chromium, never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** `skip` for suites that need Chromium: false, or the reason. */
export const chromiumSkip: string | false = existsSync(CHROMIUM) ? false : `Debian chromium is not installed at ${CHROMIUM}`;

/**
 * Headless Chromium as root on a closed network: no sandbox, no GPU, and none of the
 * background connections (updates, sync) that this machine's network would refuse.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** A port free on 127.0.0.1 right now (for servers whose URL must be known before they listen). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The widths every page is looked at in: a desktop and a phone. */
export const SCREEN_WIDTHS = [1280, 390] as const;

/**
 * Screenshots of the page as it is (a POST's answer too) at both widths into
 * test-output/screenshots/<folder>, for a person to review; a page wider than the screen is
 * recorded in `wide` for the test to assert on.
 */
export async function shootAtWidths(page: Page, folder: string, name: string, wide: string[]): Promise<void> {
  const dir = path.resolve('test-output/screenshots', folder);
  mkdirSync(dir, { recursive: true });
  for (const width of SCREEN_WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(dir, `${width}-${name}.png`), fullPage: true });
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    if (scrollWidth > width) wide.push(`${name} at ${width}px is ${scrollWidth}px wide`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** The real app listening on 127.0.0.1 at the address it names as its EXTERNAL_URL (real time, for browsers). */
export async function listeningApp(options: TestAppOptions = {}): Promise<{ t: TestApp; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await createTestApp({ manualClock: false, ...options, env: { EXTERNAL_URL: base, ...options.env } });
  await t.app.listen({ host: '127.0.0.1', port });
  return { t, base };
}

/**
 * Opens `to` as a visitor, who lands on the sign-in form, signs in there as `username` and waits
 * to be sent back to `to`, as a person following a link does.
 */
export async function signInThroughPage(page: Page, username: string, to: string, password = 'password-123'): Promise<void> {
  await page.goto(to);
  await page.fill('#user_login', username);
  await page.fill('#user_password', password);
  await Promise.all([page.waitForURL(to), page.click('#new_user button[type=submit]')]);
}
