import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** A message as nodemailer's `sendMail` takes it, `date` in epoch milliseconds (structured-cloned). */
export interface SmtpMail {
  from: string;
  replyTo?: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  headers: Record<string, string>;
  messageId: string;
  date: number;
}

/** What the SMTP server made of a message: sent, or nodemailer's error in plain values. */
export type SmtpOutcome = { ok: true } | { ok: false; message: string; code?: string; responseCode?: number };

/** The worker's code: plain CommonJS next to this module, in src/ and in dist/ (scripts/build.mjs copies it). */
function workerFile(): URL {
  const file = new URL('./smtp.worker.cjs', import.meta.url);
  if (!existsSync(file)) throw new Error(`the SMTP worker is missing: ${fileURLToPath(file)}`);
  return file;
}

/**
 * nodemailer on a thread of its own. Composing and writing a message runs stream code that the
 * HTTP server runs too; in one isolate the two kinds of streams made that code polymorphic, and
 * V8 kept deoptimising and recompiling it while a storm's mail trickled out, a fifth of the CPU
 * of alert ingestion (docs/performance.md "Mail"). The thread holds the pooled transport; a
 * message goes over as plain values and its outcome comes back the same way. The thread only
 * keeps the process alive while a message is in flight.
 */
export class SmtpWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (outcome: SmtpOutcome) => void>();
  private nextId = 0;
  private gone: Error | null = null;

  constructor(smtpUrl: string) {
    this.worker = new Worker(workerFile(), { workerData: { smtpUrl } });
    this.worker.unref();
    this.worker.on('message', (message: { id: number } & SmtpOutcome) => {
      const settle = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (this.pending.size === 0) this.worker.unref();
      const { id: _id, ...outcome } = message;
      settle?.(outcome);
    });
    this.worker.on('error', (error) => this.end(error));
    this.worker.on('exit', () => this.end(new Error('the SMTP thread exited')));
  }

  /** Whether the thread has stopped (a crash or `close`): the caller starts another. */
  get stopped(): boolean {
    return this.gone !== null;
  }

  send(mail: SmtpMail): Promise<SmtpOutcome> {
    if (this.gone) return Promise.resolve({ ok: false, message: this.gone.message });
    const id = (this.nextId += 1);
    this.worker.ref();
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker.postMessage({ id, mail });
    });
  }

  /** Closes the pool's connections and ends the thread (at most 5 s, then it is stopped). */
  async close(): Promise<void> {
    if (this.gone) return;
    const exited = new Promise((resolve) => this.worker.once('exit', resolve));
    this.worker.postMessage({ type: 'close' });
    const timer = setTimeout(() => void this.worker.terminate(), 5000);
    await exited;
    clearTimeout(timer);
  }

  /** Every message still in flight fails (the outbox retries it): its outcome is unknown. */
  private end(error: Error): void {
    this.gone ??= error;
    for (const settle of this.pending.values()) settle({ ok: false, message: `mail not sent: ${error.message}` });
    this.pending.clear();
  }
}
