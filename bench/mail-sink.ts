// A local SMTP server that accepts every message and keeps nothing but a count: the mail
// server of the mail benchmarks (bench/outbox-mail.ts, the alerts-new-mail scenario).
import { fork } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface MailSink {
  url: string;
  received(): number;
  close(): Promise<void>;
}

export async function startMailSink(): Promise<MailSink> {
  let count = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        count += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The sink in a child process of its own, so that receiving mail does not count against the
 * server being measured (the bench pins the server to one core; the sink runs where the OS puts it).
 */
export async function startMailSinkProcess(): Promise<{ url: string; close(): void }> {
  const child = fork(import.meta.filename, [], { env: { ...process.env, BENCH_MAIL_SINK_CHILD: '1' } });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return { url, close: () => child.kill() };
}

if (process.env.BENCH_MAIL_SINK_CHILD === '1') {
  const sink = await startMailSink();
  process.send?.({ url: sink.url });
}
