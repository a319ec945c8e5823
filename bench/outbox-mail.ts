// `npx tsx bench/outbox-mail.ts [count]`: how many mails a second the outbox delivers to a local
// SMTP server (issue 23 asks for at least 500). The mails are queued first (in transactions of
// 100, as a dispatch job writes them), then one process's outbox loop sends them through the
// pooled SMTP transport; the rate is counted from the first claim to the last 250 answer.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { systemClock } from '../src/infra/clock.js';
import { migrateToLatest, openDatabase } from '../src/infra/db/index.js';
import { Mailer } from '../src/infra/mail/index.js';
import { Outbox } from '../src/infra/outbox/index.js';

const COUNT = Number(process.argv[2] ?? 5000);

if (process.env.BENCH_MAIL_SINK === '1') {
  // The child: the SMTP server, on its own core's worth of event loop.
  const { startMailSink } = await import('./mail-sink.js');
  const sink = await startMailSink();
  process.send?.({ url: sink.url });
  process.on('message', () => process.send?.({ received: sink.received() }));
} else {
  const child = fork(import.meta.filename, [], { env: { ...process.env, BENCH_MAIL_SINK: '1' }, execArgv: ['--import', 'tsx'] });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-outbox-bench-'));
  const database = openDatabase({
    databaseUrl: process.env.BENCH_DATABASE_URL ?? null,
    sqliteFile: path.join(dir, 'bench.sqlite3'),
    schema: null,
  });
  await migrateToLatest(database.db, database.dialect);
  const log = pino({ level: 'silent' });
  const outbox = new Outbox(database.db, database.dialect, systemClock, log, { host: 'bench.test' });
  const mailer = new Mailer({ smtpUrl: url, from: 'Basalt <basalt@bench.test>', replyTo: null }, outbox, log);
  const text = 'A comment on an issue.\n\n'.repeat(20);
  for (let i = 0; i < COUNT; i += 100) {
    await database.db.transaction().execute(async (trx) => {
      for (let j = i; j < Math.min(COUNT, i + 100); j += 1) {
        await mailer.enqueue(trx, {
          to: `user${j}@example.com`,
          subject: `project | Issue ${j} (#${j})`,
          text,
          html: `<p>${text}</p>`,
          headers: { 'List-Id': 'group/project <1.project.group.bench.test>', 'X-GitLab-NotificationReason': 'watching' },
        });
      }
    });
  }
  const started = performance.now();
  await outbox.drain(COUNT);
  const seconds = (performance.now() - started) / 1000;
  child.send('count');
  const received = await new Promise<number>((resolve) => child.once('message', (m: { received: number }) => resolve(m.received)));
  const counts = await outbox.counts();
  process.stdout.write(
    `${JSON.stringify({ mails: COUNT, received, seconds: Number(seconds.toFixed(2)), mailsPerSecond: Math.round(COUNT / seconds), counts })}\n`,
  );
  await mailer.close();
  await database.close();
  child.kill();
  rmSync(dir, { recursive: true, force: true });
}
