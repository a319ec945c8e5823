import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { chromiumSkip, freePort, launchChromium } from '../helpers/chromium.js';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import { form, pkcePair, registerApp, type TestClient } from '../helpers/oauth.js';

const skip = chromiumSkip;

/** A person in Chromium: signs in on the sign-in page, consents, manages applications, connects a device. */
describe('OAuth pages in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let dana: TestUser;
  let client: TestClient;
  /** The third-party application's own web server, where the browser lands after consent. */
  let callbackServer: Server;
  let callbackBase: string;

  /** A fresh browser profile; the client's redirect URI is answered in the browser so its URL can be read. */
  async function newPage(): Promise<Page> {
    const context = await browser.newContext();
    const page = await context.newPage();
    return page;
  }

  async function signIn(page: Page): Promise<void> {
    assert.match(page.url(), /\/users\/sign_in\?redirect_to=/);
    await page.fill('#user_login', dana.user.username);
    await page.fill('#user_password', 'password-123');
    await Promise.all([page.waitForNavigation(), page.click('#new_user button[type=submit]')]);
  }

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ manualClock: false, env: { EXTERNAL_URL: base } });
    await t.app.listen({ host: '127.0.0.1', port });
    callbackServer = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('client callback'));
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    const address = callbackServer.address();
    callbackBase = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    dana = await createUser(t.app);
    client = await registerApp(t, { confidential: true, scopes: 'api read_user', redirectUri: `${callbackBase}/cb` });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => callbackServer?.close(resolve));
  });

  const authorizeUrl = (extra: Record<string, string> = {}) =>
    `${base}/oauth/authorize?${form({ client_id: client.clientId, redirect_uri: client.redirectUri, response_type: 'code', scope: 'api read_user', state: 'browser-state', ...extra })}`;

  it('sign-in, consent, authorize: the client receives a code it can exchange', async () => {
    const page = await newPage();
    const { verifier, challenge } = pkcePair();
    await page.goto(authorizeUrl({ code_challenge: challenge, code_challenge_method: 'S256' }));
    await signIn(page);
    assert.equal(await page.textContent('#application-name'), 'Test app');
    const scopes = await page.textContent('#scopes');
    assert.match(scopes ?? '', /api/);
    assert.match(scopes ?? '', /read_user/);
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${callbackBase}/cb`)), page.click('#authorize')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('state'), 'browser-state');
    const code = callback.searchParams.get('code');
    assert.ok(code);
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({
        grant_type: 'authorization_code',
        code,
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        client_secret: client.secret,
        code_verifier: verifier,
      }),
    });
    assert.equal(res.status, 200);
    await page.context().close();
  });

  it('deny sends the browser back with error=access_denied', async () => {
    const page = await newPage();
    // Dana authorized this application above, so only prompt=consent shows the page again.
    await page.goto(authorizeUrl({ prompt: 'consent' }));
    await signIn(page);
    await Promise.all([page.waitForURL((url) => url.toString().startsWith(`${callbackBase}/cb`)), page.click('#deny')]);
    const callback = new URL(page.url());
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('state'), 'browser-state');
    assert.equal(callback.searchParams.get('code'), null);
    await page.context().close();
  });

  it('the consent page refuses to render inside a frame', async () => {
    const page = await newPage();
    await page.goto(authorizeUrl());
    await signIn(page);
    await page.route('https://framer.example/', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: `<iframe id="f" src="${authorizeUrl({ prompt: 'consent' })}"></iframe>`,
      }),
    );
    await page.goto('https://framer.example/');
    await page.waitForTimeout(500);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    const framedText = frame ? await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '') : '';
    assert.doesNotMatch(framedText, /Authorize/);
    await page.context().close();
  });

  it('applications page: create (ID and secret shown once), renew, delete', async () => {
    const page = await newPage();
    await page.goto(`${base}/user_settings/applications`);
    await signIn(page);
    await page.fill('#application_name', 'Browser app');
    await page.fill('#application_redirect_uri', 'https://browser.example/cb\nhttp://127.0.0.1/cb');
    await page.uncheck('#application_confidential');
    await page.check('#scope_read_user');
    await page.check('#scope_openid');
    await Promise.all([page.waitForNavigation(), page.click('#new-application button[type=submit]')]);
    const uid = await page.textContent('#application-id');
    const secret = await page.textContent('#application-secret');
    assert.match(secret ?? '', /^bss_/);
    const row = await t.database.handle.db
      .selectFrom('oauth_applications')
      .selectAll()
      .where('uid', '=', uid ?? '')
      .executeTakeFirstOrThrow();
    assert.equal(row.confidential, 0);
    assert.equal(row.scopes, 'read_user openid');
    await page.goto(`${base}/user_settings/applications`);
    assert.equal(await page.locator('#application-secret').count(), 0, 'the secret is shown once');
    const rowLocator = page.locator(`tr[data-application-id="${uid}"]`);
    await Promise.all([page.waitForNavigation(), rowLocator.locator('button', { hasText: 'Renew secret' }).click()]);
    const renewed = await page.textContent('#application-secret');
    assert.ok(renewed && renewed !== secret);
    await Promise.all([page.waitForNavigation(), page.locator(`tr[data-application-id="${uid}"] button`, { hasText: 'Destroy' }).click()]);
    assert.equal(await page.locator(`tr[data-application-id="${uid}"]`).count(), 0);
    await page.context().close();
  });

  it('device page: the prefilled code, the application and scopes, authorize; the device gets its token', async () => {
    const device = await (
      await fetch(`${base}/oauth/authorize_device`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({ client_id: client.clientId, client_secret: client.secret, scope: 'read_user' }),
      })
    ).json();
    const page = await newPage();
    await page.goto(device.verification_uri_complete);
    await signIn(page);
    assert.equal(await page.inputValue('#user_code'), device.user_code);
    await Promise.all([page.waitForNavigation(), page.click('#device-entry button[type=submit]')]);
    assert.equal(await page.textContent('#application-name'), 'Test app');
    assert.match((await page.textContent('#scopes')) ?? '', /read_user/);
    await Promise.all([page.waitForNavigation(), page.click('#authorize')]);
    assert.equal(await page.textContent('#device-result'), 'Device connected');
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: device.device_code,
        client_id: client.clientId,
        client_secret: client.secret,
      }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { token_type: string }).token_type, 'Bearer');
    await page.context().close();
  });

  it('device page: a wrong code is refused on the page', async () => {
    const page = await newPage();
    await page.goto(`${base}/oauth/device`);
    await signIn(page);
    await page.fill('#user_code', 'BBBB-BBBB');
    await Promise.all([page.waitForNavigation(), page.click('#device-entry button[type=submit]')]);
    assert.match((await page.textContent('.flash-error')) ?? '', /invalid/);
    await page.context().close();
  });
});
