import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths, signInThroughPage } from '../helpers/chromium.js';
import { createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { runGit } from '../helpers/git.js';
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

  it("a group's Owner opens the group's hooks from its page, adds one, tests it, sees the delivery, and is told when tests are too many", async () => {
    // The limit counts in fixed minutes of the real clock: the six tests below must fall in one.
    const second = new Date().getUTCSeconds();
    if (second > 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const group = await createGroup(t.app, owner, { path: 'hooked-group' });
    await createProject(t.app, owner, { path: 'service', namespaceId: group.id });
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    await signInThroughPage(page, owner.user.username, `${base}/groups/${group.full_path}`);
    await shoot(page, 'group-page-settings-link', wide);
    await Promise.all([
      page.waitForNavigation(),
      page.getByRole('navigation', { name: 'Group settings' }).getByRole('link', { name: 'Webhooks' }).click(),
    ]);
    assert.equal(new URL(page.url()).pathname, `/groups/${group.full_path}/-/hooks`);
    assert.equal(await page.getByRole('heading', { level: 2 }).first().textContent(), 'Group hooks (0)');

    await page.getByLabel('URL', { exact: true }).fill(`${receiver.url}/group-browser`);
    await page.getByLabel('Name (optional)').fill('Group relay');
    await page.getByLabel('Issues events', { exact: true }).check();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Add webhook' }).click()]);
    assert.match((await page.textContent('.flash')) ?? '', /Webhook was created/);
    receiver.take();
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Test push events' }).click()]);
    assert.match((await page.textContent('.flash')) ?? '', /Hook executed successfully: HTTP 200/);
    const [push] = receiver.take('Push Hook');
    assert.ok(push, 'the test reached the receiver');
    assert.equal((push.body.project as { path_with_namespace: string }).path_with_namespace, `${group.full_path}/service`);
    await shoot(page, 'group-hooks-list', wide);

    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Edit' }).click()]);
    await page.getByRole('link', { name: 'View details' }).first().waitFor();
    await shoot(page, 'group-hook-edit', wide);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'View details' }).first().click()]);
    assert.match((await page.textContent('#request-headers')) ?? '', /Push Hook/);

    // Four more tests pass (five a minute per user and hook); the sixth is refused and says so.
    await page.goto(`${base}/groups/${group.full_path}/-/hooks`);
    for (let i = 0; i < 4; i += 1)
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Test issues events' }).click()]);
    const [refused] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Test issues events' }).click()]);
    assert.equal(refused?.status(), 429);
    assert.match(
      (await page.getByRole('alert').textContent()) ?? '',
      /Too many tests: a hook can be tested 5 times a minute\. Try again in \d+ seconds?\./,
    );
    await shoot(page, 'group-hooks-too-many-tests', wide);
    assert.deepEqual(wide, []);
    receiver.take();
  });

  it('a push with the git client sends a Push Hook naming the commit and the file it added', async () => {
    const project = await createProject(t.app, owner);
    await t.app.platform.jobs.drain();
    const hook = await t.api('POST', `/projects/${project.id}/hooks`, { token: owner.token, body: { url: `${receiver.url}/git` } });
    assert.equal(hook.statusCode, 201, hook.body);
    const work = mkdtempSync(path.join(os.tmpdir(), 'basalt-hook-push-'));
    try {
      await runGit(['init', '--quiet', '--initial-branch=main', work]);
      writeFileSync(path.join(work, 'README.md'), '# hooked\n');
      await runGit(['add', 'README.md'], { cwd: work });
      await runGit(['commit', '--quiet', '-m', 'Add the readme'], { cwd: work });
      const remote = `${base.replace('://', `://oauth2:${owner.token}@`)}/${project.full_path}.git`;
      await runGit(['push', '--quiet', remote, 'HEAD:main'], { cwd: work, env: { HOME: work } });
      const head = await runGit(['rev-parse', 'HEAD'], { cwd: work });
      receiver.take();
      await t.app.platform.outbox.drain();
      const [push] = receiver.take('Push Hook');
      assert.ok(push, 'the push reached the receiver');
      assert.equal(push.body.after, head);
      assert.equal(push.body.ref, 'refs/heads/main');
      const commits = push.body.commits as { id: string; title: string; added: string[] }[];
      assert.deepEqual(
        commits.map((c) => [c.id, c.title, c.added]),
        [[head, 'Add the readme', ['README.md']]],
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
