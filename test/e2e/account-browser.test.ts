import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths } from '../helpers/chromium.js';
import { createUser, type TestUser } from '../helpers/factories.js';
import { form, registerApp, type TestClient } from '../helpers/oauth.js';

async function click(page: Page, target: ReturnType<Page['getByRole']>): Promise<void> {
  await Promise.all([page.waitForNavigation(), target.click()]);
}

/** Screenshots of the page as it is (a POST's answer too) at both widths; none may be wider than the screen. */
const shoot = (page: Page, name: string, wide: string[]) => shootAtWidths(page, 'account', name, wide);

/** Opens the user menu in the header and follows one of its links. */
async function fromUserMenu(page: Page, username: string, label: string): Promise<void> {
  await page.locator('summary', { hasText: username }).click();
  await click(page, page.locator('.user-menu').getByRole('link', { name: label, exact: true }));
}

describe('account self-service in Chromium', { skip: chromiumSkip }, () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let callbackServer: Server;
  let callbackBase: string;
  let client: TestClient;
  const wide: string[] = [];

  before(async () => {
    ({ t, base } = await listeningApp());
    callbackServer = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('client callback'));
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    const address = callbackServer.address();
    callbackBase = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    client = await registerApp(t, {
      confidential: true,
      scopes: 'api read_user',
      redirectUri: `${callbackBase}/cb`,
      name: 'Weather dashboard',
    });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((resolve) => callbackServer?.close(resolve));
  });

  async function signedIn(user: TestUser, password = 'password-123'): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${base}/users/sign_in`);
    await page.getByLabel('Username or email').fill(user.user.username);
    await page.getByLabel('Password').fill(password);
    await click(page, page.getByRole('button', { name: 'Sign in' }));
    return { context, page };
  }

  const api = (token: string, headers: Record<string, string> = { 'private-token': token }) =>
    fetch(`${base}/api/v4/user`, { headers }).then((res) => res.status);

  it('creates a personal access token on its page, uses it with the API, revokes it: 401 after', async () => {
    const alice = await createUser(t.app);
    const { context, page } = await signedIn(alice);
    try {
      await fromUserMenu(page, alice.user.username, 'Access tokens');
      assert.equal(new URL(page.url()).pathname, '/-/user_settings/personal_access_tokens');
      await shoot(page, 'tokens-empty', wide);

      // Refused: later than MAX_ACCESS_TOKEN_LIFETIME_DAYS allows. The message stands beside the field; the name is kept.
      await page.getByLabel('Token name').fill('weather script');
      await page.getByLabel('Expiration date').fill('2999-12-31');
      await page.locator('#scope_read_user').check();
      await click(page, page.getByRole('button', { name: 'Create personal access token' }));
      assert.match((await page.locator('#field-expires_at-error').textContent()) ?? '', /must be before/);
      assert.equal(await page.getByLabel('Token name').inputValue(), 'weather script');
      assert.ok(await page.locator('#scope_read_user').isChecked());
      await shoot(page, 'tokens-refused', wide);

      await page.getByLabel('Expiration date').fill('');
      await click(page, page.getByRole('button', { name: 'Create personal access token' }));
      const token = await page.getByLabel('Your new personal access token').inputValue();
      assert.match(token, /^bsp_/);
      await shoot(page, 'tokens-created', wide);
      assert.equal(await api(token), 200, 'the token works on the API');

      await page.goto(`${base}/-/user_settings/personal_access_tokens`);
      assert.equal(await page.getByLabel('Your new personal access token').count(), 0, 'shown once');
      const row = page.locator('#active-tokens tr', { hasText: 'weather script' });
      assert.match(await row.innerText(), /read_user/);
      await shoot(page, 'tokens-list', wide);
      await click(page, row.getByRole('button', { name: 'Revoke' }));
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /Token weather script was revoked/);
      assert.equal(await api(token), 401, 'revoked: 401');
    } finally {
      await context.close();
    }
  });

  it('changes the password: the other browser context is signed out, this one stays', async () => {
    const carol = await createUser(t.app);
    const other = await signedIn(carol);
    const { context, page } = await signedIn(carol);
    try {
      await fromUserMenu(page, carol.user.username, 'Password');
      assert.equal(new URL(page.url()).pathname, '/-/user_settings/password/edit');
      await shoot(page, 'password', wide);
      await page.getByLabel('Current password').fill('wrong-password');
      await page.getByLabel('New password').fill('a-new-password-42');
      await page.getByLabel('Password confirmation').fill('a-new-password-42');
      await click(page, page.getByRole('button', { name: 'Save password' }));
      assert.match((await page.locator('#field-current_password-error').textContent()) ?? '', /is not correct/);
      await shoot(page, 'password-refused', wide);

      await page.getByLabel('Current password').fill('password-123');
      await page.getByLabel('New password').fill('a-new-password-42');
      await page.getByLabel('Password confirmation').fill('a-new-password-42');
      await click(page, page.getByRole('button', { name: 'Save password' }));
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /this browser stays signed in/);
      await page.goto(`${base}/-/user_settings/profile`);
      assert.equal(new URL(page.url()).pathname, '/-/user_settings/profile', 'this session stays');

      await other.page.goto(`${base}/-/user_settings/profile`);
      assert.equal(new URL(other.page.url()).pathname, '/users/sign_in', 'the other session ended');
    } finally {
      await context.close();
      await other.context.close();
    }
  });

  it('authorizes an application, sees it under Authorized applications, revokes it: 401 and consent asked again', async () => {
    const dana = await createUser(t.app);
    const { context, page } = await signedIn(dana);
    const authorizeUrl = `${base}/oauth/authorize?${form({ client_id: client.clientId, redirect_uri: client.redirectUri, response_type: 'code', scope: 'read_user', state: 'st' })}`;
    const exchange = async (code: string) => {
      const res = await fetch(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form({
          grant_type: 'authorization_code',
          code,
          redirect_uri: client.redirectUri,
          client_id: client.clientId,
          client_secret: client.secret,
        }),
      });
      assert.equal(res.status, 200);
      return ((await res.json()) as { access_token: string }).access_token;
    };
    try {
      await page.goto(authorizeUrl);
      assert.equal(await page.textContent('#application-name'), 'Weather dashboard');
      await shoot(page, 'consent', wide);
      await Promise.all([
        page.waitForURL((url) => url.toString().startsWith(`${callbackBase}/cb`)),
        page.getByRole('button', { name: 'Authorize' }).click(),
      ]);
      const token = await exchange(new URL(page.url()).searchParams.get('code') ?? '');
      assert.equal(await api(token, { authorization: `Bearer ${token}` }), 200);

      // Authorized before for these scopes: no consent page this time.
      await page.goto(authorizeUrl);
      assert.ok(page.url().startsWith(`${callbackBase}/cb`), `consent is remembered (${page.url()})`);
      assert.ok(new URL(page.url()).searchParams.get('code'));

      await page.goto(`${base}/`);
      await fromUserMenu(page, dana.user.username, 'Applications');
      const authorized = page.locator('#authorized-applications tr', { hasText: 'Weather dashboard' });
      assert.match(await authorized.innerText(), /read_user/);
      await shoot(page, 'applications-authorized', wide);
      await click(page, authorized.getByRole('button', { name: 'Revoke' }));
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /Access of Weather dashboard to your account was revoked/);
      assert.equal(await page.locator('#authorized-applications tr', { hasText: 'Weather dashboard' }).count(), 0);
      assert.equal(await api(token, { authorization: `Bearer ${token}` }), 401, 'its tokens get 401');

      await page.goto(authorizeUrl);
      assert.equal(new URL(page.url()).pathname, '/oauth/authorize', 'consent is asked again');
      assert.equal(await page.textContent('#application-name'), 'Weather dashboard');
    } finally {
      await context.close();
    }
  });

  it('own applications, Edit, the profile and notification pages: screenshots, and Edit refuses a bad redirect URI beside it', async () => {
    const erin = await createUser(t.app);
    const { context, page } = await signedIn(erin);
    try {
      await fromUserMenu(page, erin.user.username, 'Applications');
      await shoot(page, 'applications-empty', wide);
      await page.getByLabel('Name', { exact: true }).fill('Rain gauge');
      await page.getByLabel('Redirect URI (one per line)').fill('https://rain.example/cb');
      await page.locator('#scope_read_user').check();
      await click(page, page.getByRole('button', { name: 'Save application' }));
      assert.match((await page.locator('#application-secret').textContent()) ?? '', /^bss_/);
      await shoot(page, 'applications-created', wide);
      await page.goto(`${base}/-/user_settings/applications`);
      await click(page, page.locator('#applications tr', { hasText: 'Rain gauge' }).getByRole('link', { name: 'Edit' }));
      await shoot(page, 'application-edit', wide);
      await page.getByLabel('Redirect URI (one per line)').fill('https://rain.example/cb#top');
      await click(page, page.getByRole('button', { name: 'Save changes' }));
      assert.match((await page.locator('#application_redirect_uri-error').textContent()) ?? '', /fragment/);
      await shoot(page, 'application-edit-refused', wide);
      await page.getByLabel('Redirect URI (one per line)').fill('https://rain.example/cb');
      await page.getByLabel('Name', { exact: true }).fill('Rain gauge 2');
      await click(page, page.getByRole('button', { name: 'Save changes' }));
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /Application Rain gauge 2 was updated/);

      await fromUserMenu(page, erin.user.username, 'Edit profile');
      await shoot(page, 'profile', wide);
      await page.getByLabel('Bio').fill('Measures rain.');
      await page.getByLabel(/Private profile/).check();
      await click(page, page.getByRole('button', { name: 'Update profile settings' }));
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /Profile was updated/);
      assert.ok(await page.getByLabel(/Private profile/).isChecked());

      await fromUserMenu(page, erin.user.username, 'Notifications');
      await shoot(page, 'notifications', wide);
    } finally {
      await context.close();
    }
    assert.deepEqual(wide, []);
  });
});
