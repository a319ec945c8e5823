import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths, signInThroughPage } from '../helpers/chromium.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

const shoot = (page: Page, name: string, wide: string[]) => shootAtWidths(page, 'issue-assignees', name, wide);

/** A Reporter sets an issue's assignees and due date from its page; a Guest sees them without the form. */
describe('issue assignees and due date on the issue page in Chromium', { skip: chromiumSkip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let dev: TestUser;
  let guest: TestUser;
  let projectId: number;
  let fullPath: string;
  let iid: number;

  before(async () => {
    ({ t, base } = await listeningApp());
    [owner, dev, guest] = [await createUser(t.app), await createUser(t.app), await createUser(t.app)];
    const project = await createProject(t.app, owner, { visibility: 'private' });
    projectId = project.id;
    fullPath = project.full_path;
    await addMember(t.app, 'project', projectId, dev, 30);
    await addMember(t.app, 'project', projectId, guest, 10);
    const res = await t.api('POST', `/projects/${projectId}/issues`, {
      token: owner.token,
      body: { title: 'Checkout fails on Safari', description: 'Steps: open the cart, pay.' },
    });
    iid = res.json<{ iid: number }>().iid;
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t.close();
  });

  const save = async (page: Page) => {
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save', exact: true }).click()]);
  };
  const apiIssue = async () =>
    (await t.api('GET', `/projects/${projectId}/issues/${iid}`, { token: owner.token })).json<{
      assignees: { username: string }[];
      due_date: string | null;
    }>();

  it('the owner assigns a member and sets a due date, sees them in the sidebar, then clears them', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    const here = `${base}/${fullPath}/-/issues/${iid}`;
    await signInThroughPage(page, owner.user.username, here);
    assert.equal((await page.textContent('#issue-assignees'))?.trim(), 'None');
    assert.equal((await page.textContent('#issue-due-date'))?.trim(), 'None');
    await shoot(page, 'unassigned', wide);

    const options = await page.getByLabel('Assignees', { exact: true }).locator('option').allTextContents();
    assert.ok(options.some((o) => o.includes(`@${dev.user.username}`)));
    assert.ok(
      options.some((o) => o.includes(`@${guest.user.username}`)),
      'every member who can see the project is offered',
    );
    await page.getByLabel('Assignees', { exact: true }).selectOption([{ label: `User ${dev.user.username} (@${dev.user.username})` }]);
    await page.getByLabel('Due date', { exact: true }).fill('2031-05-20');
    await save(page);
    assert.match((await page.textContent('.flash, [role=status]')) ?? '', /Assignees and due date were saved/);
    assert.match((await page.textContent('#issue-assignees')) ?? '', new RegExp(`@${dev.user.username}`));
    assert.equal((await page.textContent('#issue-due-date'))?.trim(), '2031-05-20');
    let issue = await apiIssue();
    assert.deepEqual(
      issue.assignees.map((a) => a.username),
      [dev.user.username],
    );
    assert.equal(issue.due_date, '2031-05-20');
    await shoot(page, 'assigned', wide);

    // Two assignees (Ultimate keeps several) and a past date: the issue is marked overdue.
    await page
      .getByLabel('Assignees', { exact: true })
      .selectOption([
        { label: `User ${dev.user.username} (@${dev.user.username})` },
        { label: `User ${owner.user.username} (@${owner.user.username})` },
      ]);
    await page.getByLabel('Due date', { exact: true }).fill('2020-01-31');
    await save(page);
    assert.match((await page.textContent('#issue-due-date')) ?? '', /2020-01-31\s*Overdue/);
    issue = await apiIssue();
    assert.deepEqual(issue.assignees.map((a) => a.username).sort(), [dev.user.username, owner.user.username].sort());
    await shoot(page, 'overdue', wide);

    await page.getByLabel('Assignees', { exact: true }).selectOption([]);
    await page.getByLabel('Due date', { exact: true }).fill('');
    await save(page);
    assert.equal((await page.textContent('#issue-assignees'))?.trim(), 'None');
    assert.equal((await page.textContent('#issue-due-date'))?.trim(), 'None');
    issue = await apiIssue();
    assert.deepEqual(issue.assignees, []);
    assert.equal(issue.due_date, null);
    assert.deepEqual(wide, []);
  });

  it('a Guest sees the assignees and due date but no form to change them', async () => {
    await t.api('PUT', `/projects/${projectId}/issues/${iid}`, {
      token: owner.token,
      body: { assignee_ids: [dev.user.id], due_date: '2031-06-01' },
    });
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const here = `${base}/${fullPath}/-/issues/${iid}`;
    await signInThroughPage(page, guest.user.username, here);
    assert.match((await page.textContent('#issue-assignees')) ?? '', new RegExp(`@${dev.user.username}`));
    assert.equal((await page.textContent('#issue-due-date'))?.trim(), '2031-06-01');
    assert.equal(await page.getByRole('button', { name: 'Save', exact: true }).count(), 0);
    assert.equal(await page.locator('#issue-sidebar-form').count(), 0);
    // The form's address refuses a Guest as the API does.
    const refused = await page.evaluate(
      async (url) => (await fetch(url, { method: 'POST', body: new URLSearchParams({ due_date: '2031-01-01' }) })).status,
      `${here}/sidebar`,
    );
    assert.ok(refused === 403 || refused === 422, String(refused));
    const wide: string[] = [];
    await shoot(page, 'guest', wide);
    assert.deepEqual(wide, []);
  });
});
