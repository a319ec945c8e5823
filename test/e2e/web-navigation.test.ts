import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { chromiumSkip, freePort, launchChromium } from '../helpers/chromium.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';

/** Where the screenshots go for a person to review (CI keeps the folder as an artifact). */
const SHOTS = path.resolve('test-output/screenshots/navigation');
const WIDTHS = [1280, 390] as const;

async function signIn(page: Page, base: string, login: string, password: string): Promise<void> {
  await page.goto(`${base}/`);
  assert.equal(new URL(page.url()).pathname, '/users/sign_in', 'a visitor of / is asked to sign in');
  await page.getByLabel('Username or email').fill(login);
  await page.getByLabel('Password').fill(password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
  assert.equal(new URL(page.url()).pathname, '/', 'sign-in lands on the dashboard');
}

/** The page as it is now, at both widths (for states a later visit would not show again). */
async function shoot(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: path.join(SHOTS, `${width}-${name}.png`), fullPage: true });
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(scrollWidth <= width, `${name} at ${width}px is ${scrollWidth}px wide`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

async function click(page: Page, target: ReturnType<Page['getByRole']>): Promise<void> {
  await Promise.all([page.waitForNavigation(), target.click()]);
}

describe('navigating the web application as a new user would, in Chromium', { skip: chromiumSkip }, () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let alice: TestUser;
  let newcomer: TestUser;
  /** Every page seen, by name, for the screenshots. */
  const seen = new Map<string, string>();

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ manualClock: false, env: { EXTERNAL_URL: base } });
    await t.app.listen({ host: '127.0.0.1', port });
    alice = await createUser(t.app);
    newcomer = await createUser(t.app);
    const group = await createGroup(t.app, alice, { visibility: 'public' });
    const project = await createProject(t.app, alice, { namespaceId: group.id, visibility: 'public', path: 'weather-station' });
    await t.app.modules.projects.projects.update(project, { description: 'Readings from the roof sensors.' });
    await t.api('POST', `/projects/${project.id}/issues`, {
      token: alice.token,
      body: {
        title: 'Sensor offline',
        description: 'The **north** sensor stopped reporting at 03:00.\n\n- checked power\n- checked cable',
      },
    });
    await t.api('POST', `/projects/${project.id}/snippets`, {
      token: alice.token,
      body: { title: 'Calibration', file_name: 'calibrate.sh', content: 'sensorctl calibrate --all\n', visibility: 'public' },
    });
    browser = await launchChromium();
    mkdirSync(SHOTS, { recursive: true });
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in, lands on the dashboard, reaches a project through links, opens an issue, comments on it and closes it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    try {
      await signIn(page, base, alice.user.username, 'password-123');
      seen.set('dashboard', page.url());
      assert.match((await page.getByRole('heading', { level: 1 }).textContent()) ?? '', /Welcome/);

      await click(page, page.getByRole('link', { name: /weather-station$/ }).first());
      seen.set('project', page.url());
      assert.match(await page.locator('main').innerText(), /Readings from the roof sensors/);
      assert.equal(await page.getByLabel('Clone with HTTPS').inputValue(), `${base}${new URL(page.url()).pathname}.git`);

      await click(page, page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Issues' }));
      seen.set('issues', page.url());
      await click(page, page.getByRole('link', { name: 'Sensor offline' }));
      seen.set('issue', page.url());
      assert.equal(await page.locator('#issue-description strong').textContent(), 'north');

      await page.getByLabel('Comment', { exact: true }).fill('Replaced the cable, _watching_ it now.');
      await click(page, page.getByRole('button', { name: 'Comment' }));
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /Your comment was added/);
      assert.equal(await page.locator('#notes em').textContent(), 'watching');

      await click(page, page.getByRole('button', { name: 'Close issue' }));
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /was closed/);
      assert.equal(await page.getByRole('button', { name: 'Reopen issue' }).count(), 1);
      seen.set('issue-closed', page.url());

      await click(page, page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Activity' }));
      seen.set('activity', page.url());
      assert.match(await page.locator('main').innerText(), /closed issue #1/);

      await page.goto(seen.get('project')!);
      await click(page, page.getByRole('link', { name: 'Calibration' }));
      seen.set('snippet', page.url());
      assert.equal(await page.locator('#snippet-content').textContent(), 'sensorctl calibrate --all\n');

      await click(page, page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Groups' }));
      seen.set('dashboard-groups', page.url());
      await click(page, page.locator('#groups a').first());
      seen.set('group', page.url());
      assert.match(new URL(page.url()).pathname, /^\/groups\//);

      await click(page, page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Projects' }));
      seen.set('dashboard-projects', page.url());
      await click(page, page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity' }));
      seen.set('dashboard-activity', page.url());
      assert.match(await page.locator('main').innerText(), /commented on issue #1/);

      await page.locator('.user-menu summary').click();
      await click(page, page.getByRole('link', { name: 'Profile', exact: true }));
      seen.set('profile', page.url());
      assert.equal(new URL(page.url()).pathname, `/${alice.user.username}`);
    } finally {
      await context.close();
    }
  });

  it('a newcomer creates a project from the "Create a project" empty state', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    try {
      await signIn(page, base, newcomer.user.username, 'password-123');
      await shoot(page, 'dashboard-empty');
      await click(page, page.getByRole('link', { name: 'Create a project' }).first());
      seen.set('new-project', page.url());
      await page.getByLabel('Project name').fill('Garden Log');
      await page.getByLabel('Project slug').fill('-garden-');
      await page.getByLabel('Visibility').selectOption('public');
      await click(page, page.getByRole('button', { name: 'Create project' }));
      // The server's refusal stands beside its field, with what was typed kept.
      assert.ok(await page.locator('#field-path-error').isVisible());
      assert.equal(await page.getByLabel('Project name').inputValue(), 'Garden Log');
      // A refused form is the answer of a POST: its screenshots are taken here.
      await shoot(page, 'new-project-refused');
      await page.getByLabel('Project slug').fill('');
      await click(page, page.getByRole('button', { name: 'Create project' }));
      assert.equal(new URL(page.url()).pathname, `/${newcomer.user.username}/garden-log`);
      assert.match((await page.locator('.flash-notice').textContent()) ?? '', /Project Garden Log was created/);
      await shoot(page, 'project-new-empty');
      await click(page, page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Issues' }));
      await shoot(page, 'issues-empty');
      await click(page, page.getByRole('link', { name: 'New issue' }).first());
      seen.set('new-issue', page.url());
      await page.getByLabel('Title').fill('Plant tomatoes');
      await click(page, page.getByRole('button', { name: 'Create issue' }));
      assert.equal(await page.locator('#issue-title').textContent(), 'Plant tomatoes');
    } finally {
      await context.close();
    }
  });

  it('takes a screenshot of each page at 1280 and 390 px, and none is wider than the screen', async () => {
    const users: Record<string, TestUser> = { newcomer, alice };
    const wide: string[] = [];
    for (const width of WIDTHS) {
      for (const who of ['alice', 'newcomer'] as const) {
        const context = await browser.newContext({ viewport: { width, height: 900 } });
        const page = await context.newPage();
        page.setDefaultTimeout(20_000);
        try {
          await signIn(page, base, users[who]!.user.username, 'password-123');
          for (const [name, url] of seen) {
            const mine = ['new-project', 'new-issue'].includes(name);
            if ((who === 'newcomer') !== mine) continue;
            const response = await page.goto(url);
            assert.equal(response?.status(), 200, `${name} ${url}`);
            await page.screenshot({ path: path.join(SHOTS, `${width}-${name}.png`), fullPage: true });
            const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
            if (scrollWidth > width) wide.push(`${name} at ${width}px is ${scrollWidth}px wide`);
          }
        } finally {
          await context.close();
        }
      }
    }
    assert.deepEqual(wide, []);
  });
});
