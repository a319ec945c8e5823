import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, freePort, launchChromium } from '../helpers/chromium.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { projectWithAlertAndError } from '../helpers/pages.js';

/** Where the screenshots go for a person to review (CI keeps the folder as an artifact). */
const SHOTS = path.resolve('test-output/screenshots/crawl');
/** Bounds of the crawl: links followed from `/` this deep, and this many pages at most per person. */
const DEPTH = 3;
const MAX_PAGES = 120;
/** Pages of one kind (numbers and query folded) visited at most this often: one more page of a list adds nothing. */
const PER_KIND = 1;
/** Links to files rather than pages (a snippet's raw content) must open, in their own type. */
const FILE_LINK = /\/raw$/;

interface Visit {
  url: string;
  status: number;
  from: string;
}

/** A page's address with numbers folded, so one screenshot stands for all pages of its kind. */
const shapeOf = (url: string) => new URL(url).pathname.replace(/\/\d+(?=\/|$)/g, '/N').replace(/[^A-Za-z0-9/_-]/g, '_');

async function signIn(context: BrowserContext, base: string, login: string, password: string): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${base}/users/sign_in`);
  await page.getByLabel('Username or email').fill(login);
  await page.getByLabel('Password').fill(password);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
  assert.equal(new URL(page.url()).pathname, '/', 'sign-in lands on the dashboard');
  return page;
}

/**
 * Follows every same-site link from `/` breadth first, as a person clicking through would,
 * and records what each answered. Sign-out and links that leave the site are not followed.
 */
async function crawl(page: Page, base: string, start: string[]): Promise<{ visits: Visit[]; problems: string[] }> {
  const seen = new Set<string>();
  const kinds = new Map<string, number>();
  const visits: Visit[] = [];
  const problems: string[] = [];
  let frontier = start.map((url) => ({ url, from: '(start)' }));
  for (let depth = 0; depth <= DEPTH && frontier.length > 0; depth += 1) {
    const next: { url: string; from: string }[] = [];
    for (const { url, from } of frontier) {
      const key = url.replace(/#.*$/, '');
      if (seen.has(key) || seen.size >= MAX_PAGES) continue;
      const kind = shapeOf(key);
      if ((kinds.get(kind) ?? 0) >= PER_KIND) continue;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      seen.add(key);
      const response = await page.goto(key);
      const status = response?.status() ?? 0;
      visits.push({ url: key, status, from });
      const type = response?.headers()['content-type'] ?? '';
      if (status >= 500) problems.push(`${key} (from ${from}) answered ${status}`);
      else if (status >= 400) problems.push(`${key} (from ${from}) is a dead link: ${status}`);
      if (FILE_LINK.test(new URL(key).pathname)) continue;
      if (!type.startsWith('text/html')) problems.push(`${key} (from ${from}) is not a page: ${type}`);
      if (depth === DEPTH) continue;
      const links = await page.$$eval('a[href]', (anchors) => anchors.map((a) => (a as HTMLAnchorElement).href));
      for (const link of links) {
        if (!link.startsWith(base) || link.includes('/users/sign_out') || link.includes('/-/static/')) continue;
        next.push({ url: link, from: key });
      }
    }
    frontier = next;
  }
  return { visits, problems };
}

describe('the web application as people navigate it, in Chromium', { skip: chromiumSkip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let reporter: TestUser;
  let projectPath: string;
  let ownerVisits: Visit[] = [];

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ manualClock: false, env: { EXTERNAL_URL: base } });
    await t.app.listen({ host: '127.0.0.1', port });
    owner = await createUser(t.app);
    reporter = await createUser(t.app);
    // A seeded instance: a group with a project that has issues, comments, a snippet, an alert and an error.
    const group = await createGroup(t.app, owner);
    const project = await createProject(t.app, owner, { namespaceId: group.id });
    projectPath = project.full_path;
    await addMember(t.app, 'project', project.id, reporter, 20);
    await createProject(t.app, owner, { visibility: 'public' });
    for (const title of ['First issue', 'Second issue']) {
      const issue = await t.api('POST', `/projects/${project.id}/issues`, {
        token: owner.token,
        body: { title, description: '**bold** text' },
      });
      await t.api('POST', `/projects/${project.id}/issues/${issue.json().iid}/notes`, { token: owner.token, body: { body: 'A comment' } });
    }
    await t.api('POST', `/projects/${project.id}/snippets`, {
      token: owner.token,
      body: { title: 'A snippet', file_name: 'a.txt', content: 'hello', visibility: 'private' },
    });
    const fixtures = await projectWithAlertAndError(t, project.id, 'crawl', 7001);
    const fromError = await t.api('POST', `/projects/${project.id}/error_tracking/errors/${fixtures.errorId}/issue`, {
      token: owner.token,
    });
    assert.ok(fromError.statusCode < 300, fromError.body);
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('an owner reaches every page from / by links: no raw JSON, no 5xx, no dead link', async () => {
    const context = await browser.newContext();
    const page = await signIn(context, base, owner.user.username, 'password-123');
    const { visits, problems } = await crawl(page, base, [`${base}/`]);
    ownerVisits = visits;
    assert.deepEqual(problems, []);
    const paths = visits.map((v) => new URL(v.url).pathname);
    for (const expected of [`/${projectPath}`, `/${projectPath}/-/issues`, `/${projectPath}/-/activity`, '/dashboard/projects']) {
      assert.ok(paths.includes(expected), `${expected} is reached from / by links`);
    }
    await context.close();
  });

  it('every web_url in the API answers a page to the owner', async () => {
    const urls = new Set<string>();
    const collect = (value: unknown) => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) {
          if (k === 'web_url' && typeof v === 'string') urls.add(v);
          else collect(v);
        }
    };
    const project = (await t.api('GET', `/projects/${encodeURIComponent(projectPath)}`, { token: owner.token })).json();
    for (const url of [
      '/projects?membership=true',
      '/groups',
      `/users/${owner.user.id}`,
      `/projects/${project.id}/issues`,
      `/projects/${project.id}/issues/1/notes`,
      `/projects/${project.id}/snippets`,
      `/projects/${project.id}/members/all`,
      `/projects/${project.id}/error_tracking/errors`,
      `/projects/${project.id}/alert_management/alerts`,
    ]) {
      const res = await t.api('GET', url, { token: owner.token });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      collect(res.json());
    }
    assert.ok(urls.size >= 6, `web_urls found: ${[...urls].join(', ')}`);
    const context = await browser.newContext();
    const page = await signIn(context, base, owner.user.username, 'password-123');
    const problems: string[] = [];
    for (const url of urls) {
      const response = await page.goto(url);
      const type = response?.headers()['content-type'] ?? '';
      if ((response?.status() ?? 0) !== 200 || !type.startsWith('text/html')) problems.push(`${url}: ${response?.status()} ${type}`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  it('a Reporter follows every link it is shown without meeting a page beyond its role', async () => {
    const context = await browser.newContext();
    const page = await signIn(context, base, reporter.user.username, 'password-123');
    const { visits, problems } = await crawl(page, base, [`${base}/`, `${base}/${projectPath}`]);
    assert.deepEqual(problems, [], 'every link shown to a Reporter opens');
    const paths = new Set(visits.map((v) => new URL(v.url).pathname));
    assert.ok(paths.has(`/${projectPath}/-/issues`));
    for (const ownerOnly of [`/${projectPath}/-/settings/operations`, `/${projectPath}/-/alert_management`]) {
      assert.ok(!paths.has(ownerOnly), `${ownerOnly} is not offered to a Reporter`);
      const refused = await page.goto(`${base}${ownerOnly}`);
      assert.equal(refused?.status(), 403, ownerOnly);
      assert.match((await page.textContent('main')) ?? '', /You need the (Developer|Maintainer) role/);
    }
    await context.close();
  });

  it('takes a screenshot of every kind of page at 1280 and 390 px, none wider than the screen', async () => {
    assert.ok(ownerVisits.length > 0, 'the owner crawl ran first');
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    // Stable names: the seeded paths are replaced by what they are.
    // One screenshot per kind of page: every project's `/-/…` pages are one kind.
    const projectPage = (url: string) => {
      const at = new URL(url).pathname.indexOf('/-/');
      return at > 0 && !new URL(url).pathname.startsWith('/groups/') ? `${base}/GROUP/PROJECT${new URL(url).pathname.slice(at)}` : url;
    };
    const nameOf = (url: string) =>
      shapeOf(
        projectPage(url)
          .replace(`/${projectPath}`, '/GROUP/PROJECT')
          .replace(`/groups/${projectPath.split('/')[0]}`, '/groups/GROUP'),
      )
        .replace(/\//g, '_')
        .replace(/^_?$/, '_home');
    const shapes = new Map<string, string>();
    for (const visit of ownerVisits) if (!shapes.has(nameOf(visit.url))) shapes.set(nameOf(visit.url), visit.url);
    const tooWide: string[] = [];
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await signIn(context, base, owner.user.username, 'password-123');
      for (const [name, url] of shapes) {
        await page.goto(url);
        await page.screenshot({ path: path.join(SHOTS, `${width}${name}.png`), fullPage: true });
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (overflow > 1) tooWide.push(`${url} at ${width} px is wider than the screen by ${overflow} px`);
      }
      await context.close();
    }
    assert.deepEqual(tooWide, []);
  });

  it('an administrator reaches every page of the admin area by links, each fitting 1280 and 390 px', async () => {
    const context = await browser.newContext();
    const page = await signIn(context, base, 'root', 'root-password-123');
    const { visits, problems } = await crawl(page, base, [`${base}/admin`]);
    assert.deepEqual(problems, []);
    const paths = new Set(visits.map((v) => new URL(v.url).pathname));
    for (const expected of ['/admin/users', '/admin/users/new', '/admin/applications', '/admin/storages', '/admin/storages/default'])
      assert.ok(paths.has(expected), `${expected} is reached from /admin`);
    const tooWide: string[] = [];
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      for (const url of visits.map((v) => v.url).filter((u) => new URL(u).pathname.startsWith('/admin'))) {
        await page.goto(url);
        await page.screenshot({ path: path.join(SHOTS, `${width}${shapeOf(url).replace(/\//g, '_')}.png`), fullPage: true });
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        if (overflow > 1) tooWide.push(`${url} at ${width} px is wider than the screen by ${overflow} px`);
      }
    }
    assert.deepEqual(tooWide, []);
    await context.close();
  });
});
