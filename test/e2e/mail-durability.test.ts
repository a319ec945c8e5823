import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { LIVE_ROOT_PASSWORD, LIVE_ROOT_TOKEN, liveMailedAlerts, liveSqlite } from '../helpers/live.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.js';
import { waitUntil } from '../helpers/wait.js';

const MAILS = 200;
/**
 * What a killed process can leave sent but unrecorded: its items in flight (32) and the sent items
 * it records together (up to 64 more before each statement).
 */
const IN_FLIGHT_MAX = 32 + 64;

/**
 * Durability of the outbox (issue 23): 200 alert e-mails are queued while the SMTP server is
 * slow, the server process is SIGKILLed while it is sending them, and started again on the same
 * data. Every mail arrives; a mail whose answer the killed process never read is sent again with
 * the same Message-ID, so the receiving side keeps one of each (the mailbox here, keyed by it).
 */
describe('mail outbox survives SIGKILL', () => {
  let smtp: TestSmtp | null = null;
  let server: ServerProcess | null = null;
  after(async () => {
    await server?.stop('SIGKILL');
    await smtp?.close();
  });

  it(
    'kills the server while 200 mails are queued and the SMTP server is slow; after a restart each arrives, none twice',
    { timeout: 120_000 },
    async () => {
      smtp = await startTestSmtp({ delayMs: 40 });
      const env = {
        BASALT_ROOT_TOKEN: LIVE_ROOT_TOKEN,
        BASALT_ROOT_PASSWORD: LIVE_ROOT_PASSWORD,
        RATE_LIMITS: '',
        SMTP_URL: smtp.url(),
        EMAIL_FROM: 'Basalt <basalt@basalt.test>',
        OUTBOX_LEASE_SECONDS: '2',
      };
      // The first process only stores: it runs no jobs, so every mail is still queued when it stops.
      server = await startServer({ ...env, RUN_JOBS: 'false' });
      const base = server.url;
      const dataDir = server.dataDir;
      const { notifyPath, token } = await liveMailedAlerts(base, 'mailed');
      for (let i = 0; i < MAILS; i += 1) {
        const res = await fetch(`${base}${notifyPath}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ title: `Alert ${i}` }),
        });
        assert.equal(res.status, 200, await res.text());
      }
      const db = liveSqlite(dataDir);
      try {
        // One item per alert (its e-mails are made by the job that sends them).
        const queued = await db.query<{ n: number }>(`select count(*) as n from outbox where kind = 'alert_email' and state = 'pending'`);
        assert.equal(queued[0]?.n, MAILS);
      } finally {
        await db.close();
      }
      await server.stop('SIGTERM');

      // The second process sends; it is killed while the slow server has taken part of them.
      server = await startServer({ ...env, DATA_DIR: dataDir });
      await waitUntil(() => smtp!.received.length >= 40, '40 mails received', { attempts: 1500, intervalMs: 20 });
      await server.stop('SIGKILL');
      const beforeRestart = smtp.mailbox.size;
      assert.ok(beforeRestart < MAILS, `killed while sending (${beforeRestart} of ${MAILS} had arrived)`);

      // The third picks up what was pending and, once their lease ran out, what was in flight.
      server = await startServer({ ...env, DATA_DIR: dataDir });
      // Root's "new personal access token" mail (its bootstrap token) goes out too: only alert mail is counted.
      const alertMails = (list: Iterable<ReceivedMail>) => [...list].filter((m) => m.subject.includes(' | Alert: '));
      await waitUntil(() => alertMails(smtp!.mailbox.values()).length >= MAILS, `all ${MAILS} mails`, { attempts: 3000, intervalMs: 20 });
      const subjects = new Set([...smtp.mailbox.values()].map((m) => m.subject));
      for (let i = 0; i < MAILS; i += 1)
        assert.ok(subjects.has(`mailed | Alert: Alert ${i}`) || [...subjects].some((s) => s.endsWith(`Alert: Alert ${i}`)), `Alert ${i}`);
      assert.equal(alertMails(smtp.mailbox.values()).length, MAILS, 'one Message-ID per mail');
      // A repeat is only ever a mail the killed process had handed over without reading the answer.
      const repeats = alertMails(smtp.received).length - MAILS;
      assert.ok(repeats <= IN_FLIGHT_MAX, `${repeats} repeats`);
      for (const mail of smtp.received) assert.equal(smtp.mailbox.get(mail.messageId)?.subject, mail.subject, 'a repeat is the same mail');
      rmSync(dataDir, { recursive: true, force: true });
    },
  );
});
