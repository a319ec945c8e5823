import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { launchChromium } from '../helpers/chromium.js';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { type Browser } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (Debian package chromium)`;

describe('signing in through the page with Chromium', { skip }, () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let browser: Browser;
  let base: string;

  before(async () => {
    database = await createTestDatabase();
    const config = loadConfig(
      {
        DATA_DIR: database.dataDir,
        BASALT_ROOT_PASSWORD: 'root-password-123',
        EXTERNAL_URL: 'http://127.0.0.1',
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
        ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      },
      { databaseSchema: database.schema, sqliteFile: database.sqliteFile },
    );
    app = await buildApp(config, { database: database.handle, startJobs: false });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    assert.ok(address && typeof address === 'object');
    base = `http://127.0.0.1:${address.port}`;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it('a signed-out visit goes to the form, a wrong password is told, the right one lands back, sign-out ends it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${base}/profile`);
      assert.equal(new URL(page.url()).pathname, '/users/sign_in');
      assert.equal(new URL(page.url()).searchParams.get('redirect_to'), '/profile');

      await page.fill('#user_login', 'root');
      await page.fill('#user_password', 'not-the-password');
      await Promise.all([page.waitForLoadState('load'), page.click('button[type=submit]')]);
      assert.match((await page.textContent('.flash-error')) ?? '', /Invalid login or password/);

      await page.fill('#user_login', 'root');
      await page.fill('#user_password', 'root-password-123');
      await Promise.all([page.waitForURL(`${base}/profile`), page.click('#new_user button[type=submit]')]);
      assert.equal(await page.textContent('#signed-in-username'), 'root');
      assert.equal(await page.textContent('header .user-menu summary'), 'root');

      const cookie = (await context.cookies()).find((c) => c.name === '_service_session');
      assert.ok(cookie, 'the session cookie is set');
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite, 'Lax');

      // The same browser session reaches the API.
      const api = await page.evaluate(async () => (await fetch('/api/v4/user')).json());
      assert.equal((api as { username: string }).username, 'root');

      // Sign out is in the user menu, which opens first.
      await page.click('header .user-menu summary');
      await Promise.all([page.waitForURL(/\/users\/sign_in$/), page.click('header button[type=submit]')]);
      assert.equal(
        (await context.cookies()).some((c) => c.name === '_service_session'),
        false,
      );
      await page.goto(`${base}/profile`);
      assert.equal(new URL(page.url()).pathname, '/users/sign_in');
    } finally {
      await context.close();
    }
  });
});
