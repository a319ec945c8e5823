import type { FastifyBaseLogger } from 'fastify';
import type { MailConfig } from '../../config/index.js';
import type { Executor } from '../db/index.js';
import type { Outbox, OutboxItem, SendResult } from '../outbox/index.js';
import { SmtpWorker } from './smtp-worker.js';

/** The outbox kind of e-mails. */
export const EMAIL_KIND = 'email';

/** One e-mail as queued: one recipient, both parts, extra headers (List-Id, List-Unsubscribe, …). */
export interface EmailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Mail over SMTP through the outbox. `enqueue` writes the message in the caller's transaction
 * (nothing at all when SMTP_URL is unset); the outbox's loop hands it to nodemailer's pooled
 * SMTP transport, which runs on a thread of its own (smtp-worker.ts). The outbox item's message id is the mail's Message-ID, so a retry after a
 * send whose answer was lost carries the same id and the receiving side can recognise it.
 */
export class Mailer {
  private smtp: SmtpWorker | null = null;

  constructor(
    private readonly config: MailConfig | null,
    private readonly outbox: Outbox,
    private readonly log: FastifyBaseLogger,
  ) {
    outbox.register(EMAIL_KIND, { send: (item) => this.send(item) });
  }

  /** Whether mail is configured (SMTP_URL set); pages say so when it is not. */
  get enabled(): boolean {
    return this.config !== null;
  }

  /** Queues `message` in the caller's transaction; `messageId` (without angle brackets) makes a repeat a no-op. */
  async enqueue(executor: Executor, message: EmailMessage, options: { messageId?: string; runAt?: number } = {}): Promise<void> {
    if (!this.config) return;
    await this.outbox.enqueue(executor, EMAIL_KIND, message, options);
  }

  /** A fresh Message-ID (without angle brackets) for callers that need to know it in advance. */
  messageId(): string {
    return this.outbox.newMessageId();
  }

  async close(): Promise<void> {
    const smtp = this.smtp;
    this.smtp = null;
    await smtp?.close();
  }

  /** The SMTP thread, started on the first message and again after it stopped. */
  private smtpFor(config: MailConfig): SmtpWorker {
    if (!this.smtp || this.smtp.stopped) this.smtp = new SmtpWorker(config.smtpUrl);
    return this.smtp;
  }

  private async send(item: OutboxItem): Promise<SendResult> {
    const config = this.config;
    if (!config) return { ok: false, error: 'mail is not configured (SMTP_URL is unset)', retryAfterMs: 3_600_000 };
    const message = item.payload as EmailMessage;
    const outcome = await this.smtpFor(config).send({
      from: config.from,
      ...(config.replyTo ? { replyTo: config.replyTo } : {}),
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.html ? { html: message.html } : {}),
      headers: { ...message.headers },
      messageId: `<${item.messageId}>`,
      date: item.createdAt,
    });
    if (outcome.ok) return { ok: true };
    // A 5xx answer to this message (unknown mailbox, refused content) will not change on a
    // retry; everything else will: 4xx, connection failures, and refused credentials (the
    // operator fixes SMTP_URL, and the queued mail goes out then).
    const permanent =
      (outcome.code === 'EENVELOPE' || outcome.code === 'EMESSAGE') &&
      typeof outcome.responseCode === 'number' &&
      outcome.responseCode >= 500 &&
      outcome.responseCode < 600;
    this.log.warn({ outbox: item.id, code: outcome.code, responseCode: outcome.responseCode }, 'mail not delivered');
    return { ok: false, error: outcome.message, permanent };
  }
}
