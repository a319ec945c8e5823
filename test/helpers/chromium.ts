import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

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
