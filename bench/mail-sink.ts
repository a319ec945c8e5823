// A local SMTP server that accepts every message and keeps nothing but a count: the mail
// server of the mail benchmarks (bench/outbox-mail.ts, the alerts-new-mail scenario).
import { fork, spawnSync } from 'node:child_process';
import os from 'node:os';
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
 * server being measured. A forked child inherits its parent's CPU affinity, and the bench pins
 * the server to core 0: the sink is moved off it (to the load generator's core, where the machine
 * has more than one), or it would take the measured server's core for each mail it receives.
 */
export async function startMailSinkProcess(): Promise<{ url: string; close(): void }> {
  const child = fork(import.meta.filename, [], { env: { ...process.env, BENCH_MAIL_SINK_CHILD: '1' } });
  // The machine's cores, not this process's: availableParallelism counts only the pinned one.
  const cores = os.cpus().length;
  if (child.pid !== undefined && cores >= 2) {
    spawnSync('taskset', ['-a', '-p', '-c', String(cores - 1), String(child.pid)], { stdio: 'ignore' });
  }
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return { url, close: () => child.kill() };
}

if (process.env.BENCH_MAIL_SINK_CHILD === '1') {
  const sink = await startMailSink();
  process.send?.({ url: sink.url });
}
