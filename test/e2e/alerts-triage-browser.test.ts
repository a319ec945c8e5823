import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { settle } from '../helpers/alerts.js';
import { alertmanagerSkip, startAlertmanager, waitFor, type RunningAlertmanager } from '../helpers/alertmanager.js';
import type { TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths, signInThroughPage } from '../helpers/chromium.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';

const shoot = (page: Page, name: string, wide: string[]) => shootAtWidths(page, 'alerts-triage', name, wide);

/**
 * Triage in Chromium of alerts a real Prometheus Alertmanager sends to a Prometheus integration
 * made on Settings > Monitor: both fire under Open, one is acknowledged (it moves tabs) and then
 * resolved by Alertmanager, an incident is opened from the other and linked both ways.
 */
describe('Alertmanager alerts triaged on the alert pages in Chromium', { skip: chromiumSkip || alertmanagerSkip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: TestUser;
  let fullPath: string;
  let am: RunningAlertmanager | null = null;

  before(async () => {
    ({ t, base } = await listeningApp());
    await settle(t);
    owner = await createUser(t.app);
    fullPath = (await createProject(t.app, owner)).full_path;
    browser = await launchChromium();
  });

  after(async () => {
    await am?.stop();
    await browser?.close();
    await t.close();
  });

  const click = async (page: Page, name: string) => {
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name, exact: true }).click()]);
  };
  /** The titles listed on a tab and the counts the tabs show. */
  const tab = async (page: Page, name: string) => {
    await page.goto(`${base}/${fullPath}/-/alert_management${name === 'open' ? '' : `?tab=${name}`}`);
    const titles = await page.locator('td.alert-title a').allTextContents();
    const counts = Object.fromEntries(
      await Promise.all(
        ['open', 'triggered', 'acknowledged', 'resolved', 'all'].map(async (n) => [
          n,
          Number(await page.textContent(`[data-tab=${n}] .count`)),
        ]),
      ),
    ) as Record<string, number>;
    return { titles: titles.sort(), counts };
  };

  it('fires two alerts, acknowledges one, sees Alertmanager resolve it, opens an incident from the other', async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    const wide: string[] = [];
    const settings = `${base}/${fullPath}/-/settings/operations`;
    await signInThroughPage(page, owner.user.username, settings);
    await page.getByLabel('Name', { exact: true }).fill('Alertmanager');
    await page.getByLabel('Type', { exact: true }).selectOption('prometheus');
    await click(page, 'Create integration');
    const url = (await page.textContent('#integration-url')) ?? '';
    const key = (await page.textContent('#integration-key')) ?? '';
    assert.match(url, /\/prometheus\/alerts\/notify\.json$/);
    am = await startAlertmanager(url, key);

    const startsAt = new Date(Date.now() - 60_000).toISOString();
    const alerts = [
      {
        labels: { alertname: 'DiskFull', severity: 'critical', instance: 'db-1' },
        annotations: { title: 'Disk full on db-1', runbook: 'https://runbooks.test/disk' },
        startsAt,
        generatorURL: 'http://prometheus.test:9090/graph?g0.expr=node_filesystem_avail_bytes+%3C+1e9',
      },
      {
        labels: { alertname: 'HighErrorRate', severity: 'warning' },
        annotations: { summary: 'Errors above 5%' },
        startsAt,
        generatorURL: 'http://prometheus.test:9090/graph?g0.expr=rate(errors[5m])',
      },
    ];
    await am.post(alerts);
    const open = await waitFor('both alerts under Open', 30_000, async () => {
      const shown = await tab(page, 'open');
      return shown.titles.length === 2 ? shown : undefined;
    }).catch((error: Error) => {
      throw new Error(`${error.message}\nalertmanager output:\n${am?.output() ?? ''}`);
    });
    assert.deepEqual(open.titles, ['Disk full on db-1', 'Errors above 5%']);
    assert.deepEqual(open.counts, { open: 2, triggered: 2, acknowledged: 0, resolved: 0, all: 2 });
    assert.equal(await page.locator('tr', { hasText: 'Disk full' }).locator('.severity').textContent(), 'critical');
    await shoot(page, 'open', wide);

    // Acknowledge the disk alert on its page: it moves from Triggered to Acknowledged.
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Disk full on db-1' }).click()]);
    assert.equal(await page.getAttribute('[data-field=Runbook] a', 'href'), 'https://runbooks.test/disk');
    await page.getByLabel('Status', { exact: true }).selectOption('acknowledged');
    await click(page, 'Change status');
    assert.match((await page.textContent('.flash')) ?? '', /Status changed to acknowledged/);
    const acked = await tab(page, 'acknowledged');
    assert.deepEqual(acked.titles, ['Disk full on db-1']);
    assert.deepEqual(acked.counts, { open: 2, triggered: 1, acknowledged: 1, resolved: 0, all: 2 });
    assert.deepEqual((await tab(page, 'triggered')).titles, ['Errors above 5%']);
    await shoot(page, 'triggered', wide);

    // Alertmanager resolves it: it leaves Open for Resolved, and its page says who resolved it.
    await am.post([{ ...alerts[0], endsAt: new Date(Date.now() - 1000).toISOString() }]);
    const resolved = await waitFor('the disk alert under Resolved', 30_000, async () => {
      const shown = await tab(page, 'resolved');
      return shown.titles.length === 1 ? shown : undefined;
    });
    assert.deepEqual(resolved.titles, ['Disk full on db-1']);
    assert.deepEqual(resolved.counts, { open: 1, triggered: 1, acknowledged: 0, resolved: 1, all: 2 });
    await shoot(page, 'resolved', wide);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Disk full on db-1' }).click()]);
    const activity = (await page.textContent('.alert-activity')) ?? '';
    assert.match(activity, /changed the status to acknowledged[^]*The monitoring tool changed the status to resolved/);
    await shoot(page, 'alert-resolved', wide);

    // An incident from the other alert: linked from the alert, and back from the incident.
    await tab(page, 'open');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Errors above 5%' }).click()]);
    const alertUrl = page.url();
    await click(page, 'Create incident');
    assert.match((await page.textContent('.flash')) ?? '', /Incident #\d+ created/);
    assert.equal(await page.getByRole('button', { name: 'Create incident' }).count(), 0);
    assert.match((await page.textContent('.alert-activity')) ?? '', /created incident #\d+/);
    await shoot(page, 'alert-incident', wide);
    await Promise.all([page.waitForNavigation(), page.click('#incident-link')]);
    assert.match(new URL(page.url()).pathname, new RegExp(`^/${fullPath}/-/issues/\\d+$`));
    assert.match((await page.textContent('h1')) ?? '', /Errors above 5%/);
    await shoot(page, 'incident', wide);
    await Promise.all([
      page.waitForNavigation(),
      page
        .locator(`a[href="${new URL(alertUrl).pathname}"]`)
        .first()
        .click(),
    ]);
    assert.equal(page.url(), alertUrl);
    assert.deepEqual(wide, []);
  });
});
