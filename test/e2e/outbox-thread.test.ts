import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LIVE_ROOT_PASSWORD, LIVE_ROOT_TOKEN, liveMailedAlerts } from '../helpers/live.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { waitUntil } from '../helpers/wait.js';

const ALERTS = 20;

/** The JSON log lines of a server's output. */
function logLines(server: ServerProcess): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * The outbox's loop runs on a thread of its own (src/outbox-thread.ts, OUTBOX_THREAD, on by
 * default) in a server that runs jobs: alerts posted to the HTTP thread are mailed from there,
 * each once, and SIGTERM stops the thread with the server. OUTBOX_THREAD=false sends from the
 * HTTP thread's own loop, the same mail.
 */
describe('the outbox thread', () => {
  let smtp: TestSmtp | null = null;
  let server: ServerProcess | null = null;
  after(async () => {
    await server?.stop('SIGKILL');
    await smtp?.close();
  });

  const mailAlerts = async (outboxThread: 'true' | 'false') => {
    smtp = await startTestSmtp();
    server = await startServer({
      BASALT_ROOT_TOKEN: LIVE_ROOT_TOKEN,
      BASALT_ROOT_PASSWORD: LIVE_ROOT_PASSWORD,
      RATE_LIMITS: '',
      SMTP_URL: smtp.url(),
      EMAIL_FROM: 'Basalt <basalt@basalt.test>',
      OUTBOX_THREAD: outboxThread,
    });
    const base = server.url;
    const { notifyPath, token } = await liveMailedAlerts(base, `mailed-${outboxThread}`);
    await Promise.all(
      Array.from({ length: ALERTS }, async (_, i) => {
        const res = await fetch(`${base}${notifyPath}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ title: `Threaded alert ${i}` }),
        });
        assert.equal(res.status, 200, await res.text());
      }),
    );
    const mail = smtp;
    await waitUntil(() => mail.received.filter((m) => m.subject.includes('Threaded alert')).length >= ALERTS, `${ALERTS} alert mails`, {
      attempts: 500,
      intervalMs: 20,
    });
    const subjects = mail.received.filter((m) => m.subject.includes('Threaded alert')).map((m) => m.subject);
    assert.equal(new Set(subjects).size, ALERTS, 'one mail per alert, none twice');
    assert.equal(new Set(mail.received.map((m) => m.messageId)).size, mail.received.length, 'each Message-ID once');
    const started = logLines(server).filter((line) => line.thread === 'outbox' && line.msg === 'outbox thread started');
    const code = await server.stop('SIGTERM');
    assert.equal(code, 0, `the server and its thread stop cleanly:\n${server.output()}`);
    const failures = logLines(server).filter((line) => Number(line.level) >= 50);
    assert.deepEqual(failures, [], 'nothing logged at error level');
    await smtp.close();
    smtp = null;
    server = null;
    return started.length;
  };

  it('mails alerts from its own thread, each once, and stops with the server', { timeout: 90_000 }, async () => {
    assert.equal(await mailAlerts('true'), 1, 'the thread started once');
  });

  it('with OUTBOX_THREAD=false the HTTP thread sends the same mail itself', { timeout: 90_000 }, async () => {
    assert.equal(await mailAlerts('false'), 0, 'no thread');
  });
});
