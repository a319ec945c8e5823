import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { chromiumSkip, launchChromium, listeningApp, shootAtWidths, signInThroughPage } from '../helpers/chromium.js';
import type { TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { enableTracking, exceptionEvent, hex32, sentryAuth, storePath } from '../helpers/sentry.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.js';

/**
 * The error mail setting as a Maintainer uses it: the box on Settings > Monitor, unticked and
 * saved, stops the mail about a new error; ticked again, the next new error is mailed.
 */
describe('the error mail box on Settings > Monitor in Chromium', { skip: chromiumSkip }, () => {
  let t: TestApp;
  let base: string;
  let smtp: TestSmtp;
  let browser: Browser;
  let owner: TestUser;
  let maintainer: TestUser;
  let projectId: number;
  let fullPath: string;
  let key: string;

  before(async () => {
    smtp = await startTestSmtp();
    ({ t, base } = await listeningApp({ env: { SMTP_URL: smtp.url(), EMAIL_FROM: 'Basalt <basalt@basalt.test>' } }));
    owner = await createUser(t.app);
    maintainer = await createUser(t.app);
    const project = await createProject(t.app, owner);
    projectId = project.id;
    fullPath = project.full_path;
    await addMember(t.app, 'project', projectId, maintainer, 40);
    key = (await enableTracking(t, projectId, owner.token)).key;
    browser = await launchChromium();
    await deliver();
  });
  after(async () => {
    await browser?.close();
    await t.close();
    await smtp.close();
  });

  async function deliver(): Promise<ReceivedMail[]> {
    const before = smtp.received.length;
    await t.app.platform.jobs.drain();
    await t.app.platform.outbox.drain();
    return smtp.received.slice(before);
  }
  let seq = 0;
  async function newError(value: string): Promise<void> {
    seq += 1;
    const event = exceptionEvent({ eventId: hex32(seq + 9000), type: 'ValueError', value, fingerprint: [value] });
    const res = await fetch(`${base}${storePath(projectId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sentry-auth': sentryAuth(key) },
      body: JSON.stringify(event),
    });
    assert.equal(res.status, 200, await res.text());
  }

  it('untick, save: no mail for a new error; tick, save: the next one is mailed', async () => {
    const page = await browser.newPage();
    const settings = `${base}/${fullPath}/-/settings/operations`;
    await signInThroughPage(page, maintainer.user.username, settings);
    await deliver(); // maintainer's sign-in: the first, so nothing
    const save = () => page.locator('#error-tracking-settings').getByRole('button', { name: 'Save changes' }).click();
    const box = page.getByLabel('Email new and regressed errors to Maintainers and Owners');
    assert.equal(await box.isChecked(), true, 'on by default');
    const wide: string[] = [];
    await shootAtWidths(page, 'error-tracking', 'settings-error-mail', wide);
    assert.deepEqual(wide, []);

    await box.uncheck();
    await Promise.all([page.waitForURL(`${settings}#error-tracking-settings`), save()]);
    assert.equal(await page.getByLabel('Email new and regressed errors to Maintainers and Owners').isChecked(), false);
    assert.equal(await page.getByLabel('Active (integrated error tracking)').isChecked(), true, 'tracking stays on');
    await newError('quiet');
    assert.deepEqual(await deliver(), []);

    await page.getByLabel('Email new and regressed errors to Maintainers and Owners').check();
    await Promise.all([page.waitForURL(`${settings}#error-tracking-settings`), save()]);
    assert.equal(await page.getByLabel('Email new and regressed errors to Maintainers and Owners').isChecked(), true);
    await newError('loud');
    const mails = await deliver();
    assert.deepEqual(mails.flatMap((m) => m.to).sort(), [owner.user.email, maintainer.user.email].sort());
    assert.match(mails[0]?.subject ?? '', /\| New error: ValueError: loud$/);
    await page.close();
  });
});
