import type { Executor } from '../../infra/db/index.js';
import type { Mailer } from '../../infra/mail/index.js';
import { listId, renderHtml, renderText, type MailTemplate } from './mail-template.rules.js';
import type { MailReason } from './notifications.rules.js';
import type { NotificationsService } from './notifications.service.js';
import { unsubscribeToken } from './unsubscribe.rules.js';

/** How long the recipients of a project's alert mail are kept (an alert storm resolves them once). */
export const ALERT_RECIPIENTS_TTL_MS = 5_000;

export const UNSUBSCRIBE_PATH = '/-/notifications/unsubscribe';
export const SETTINGS_PATH = '/-/profile/notifications';

/** One mail about something in a project, to one recipient. */
export interface ProjectMail {
  userId: number;
  to: string;
  reason: MailReason;
  project: { id: number; full_path: string };
  subject: string;
  template: Omit<MailTemplate, 'footer'>;
  /** The thread this mail belongs to (an issue): References, so mail clients group the mails. */
  thread?: string;
}

/** One account mail (password changed, new token): sent whatever the levels say. */
export interface AccountMail {
  to: string;
  subject: string;
  template: Omit<MailTemplate, 'footer'>;
}

/**
 * Turns notifications into queued e-mails: the same template as text and HTML, and the
 * headers of the established product's notification mails (List-Id, one-click List-Unsubscribe
 * per RFC 8058, X-GitLab-NotificationReason, X-GitLab-Project*).
 */
export class NotificationMailer {
  /** The instance's host name (List-Id, Message-ID right-hand sides). */
  readonly host: string;
  private readonly alertAnswers = new Map<string, { until: number; value: ReadonlyMap<number, { to: string; reason: string }> }>();

  constructor(
    private readonly mail: Mailer,
    private readonly service: NotificationsService,
    private readonly externalUrl: string,
    private readonly secret: string,
  ) {
    this.host = new URL(externalUrl).hostname;
  }

  get enabled(): boolean {
    return this.mail.enabled;
  }

  /** The one-click unsubscribe address for this user and project. */
  unsubscribeUrl(userId: number, projectId: number): string {
    return `${this.externalUrl}${UNSUBSCRIBE_PATH}/${unsubscribeToken(userId, projectId, this.secret)}`;
  }

  async queueProjectMail(executor: Executor, mail: ProjectMail, options: { messageId?: string } = {}): Promise<void> {
    if (!this.mail.enabled) return;
    const unsubscribe = this.unsubscribeUrl(mail.userId, mail.project.id);
    const template: MailTemplate = {
      ...mail.template,
      footer: [
        `You are receiving this e-mail because of your notification settings (${mail.reason}) for ${mail.project.full_path} on ${this.host}.`,
        `Unsubscribe from this project: ${unsubscribe}`,
        `Manage all notifications: ${this.externalUrl}${SETTINGS_PATH}`,
      ],
    };
    const headers: Record<string, string> = {
      'List-Id': listId(mail.project, this.host),
      'List-Unsubscribe': `<${unsubscribe}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-GitLab-NotificationReason': mail.reason,
      'X-GitLab-Project': mail.project.full_path.slice(mail.project.full_path.lastIndexOf('/') + 1),
      'X-GitLab-Project-Id': String(mail.project.id),
      'X-GitLab-Project-Path': mail.project.full_path,
      'Auto-Submitted': 'auto-generated',
      'X-Auto-Response-Suppress': 'All',
    };
    if (mail.thread) {
      headers.References = `<${mail.thread}@${this.host}>`;
      headers['In-Reply-To'] = `<${mail.thread}@${this.host}>`;
    }
    await this.mail.enqueue(
      executor,
      {
        to: mail.to,
        subject: mail.subject,
        text: renderText(template),
        html: renderHtml(template),
        headers,
      },
      options,
    );
  }

  async queueAccountMail(executor: Executor, mail: AccountMail, options: { messageId?: string } = {}): Promise<void> {
    if (!this.mail.enabled) return;
    const template: MailTemplate = {
      ...mail.template,
      footer: [`You are receiving this e-mail because of your account on ${this.host}.`],
    };
    await this.mail.enqueue(
      executor,
      {
        to: mail.to,
        subject: mail.subject,
        text: renderText(template),
        html: renderHtml(template),
        headers: { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' },
      },
      options,
    );
  }

  // --- the alerts module's port (AlertRecipients) ---

  /** Recipients of an alert e-mail: `participants` (the maintainers) take part, so their level still decides. */
  async alertRecipients(
    projectId: number,
    event: string,
    participants: readonly number[],
  ): Promise<ReadonlyMap<number, { to: string; reason: string }>> {
    if (!this.mail.enabled) return new Map();
    // An alert storm asks this for every new alert of a project: the answer (about ten reads) is
    // kept for a few seconds, so a changed setting applies to alert mail within ALERT_RECIPIENTS_TTL_MS.
    const key = `${projectId}\u0000${event}\u0000${participants.join(',')}`;
    const kept = this.alertAnswers.get(key);
    const now = Date.now();
    if (kept && kept.until > now) return kept.value;
    const value = await this.resolveAlertRecipients(projectId, event, participants);
    if (this.alertAnswers.size >= 1_000) this.alertAnswers.clear();
    this.alertAnswers.set(key, { until: now + ALERT_RECIPIENTS_TTL_MS, value });
    return value;
  }

  private async resolveAlertRecipients(
    projectId: number,
    event: string,
    participants: readonly number[],
  ): Promise<ReadonlyMap<number, { to: string; reason: string }>> {
    const details = await this.service.recipientDetails(projectId, event, { participants });
    if (details.length === 0) return new Map();
    const emails = await this.service.notificationEmails(details.map((d) => d.userId));
    const out = new Map<number, { to: string; reason: string }>();
    for (const d of details) {
      const to = emails.get(d.userId);
      if (to) out.set(d.userId, { to, reason: d.reason });
    }
    return out;
  }

  async queueAlertEmail(
    executor: Executor,
    mail: {
      userId: number;
      to: string;
      reason: string;
      projectId: number;
      projectPath: string;
      subject: string;
      text: string;
      url: string;
    },
    options: { messageId?: string } = {},
  ): Promise<void> {
    const [lead, ...rest] = mail.text.split('\n\n');
    await this.queueProjectMail(
      executor,
      {
        userId: mail.userId,
        to: mail.to,
        reason: mail.reason as MailReason,
        project: { id: mail.projectId, full_path: mail.projectPath },
        subject: mail.subject,
        template: { lead: lead ?? mail.subject, paragraphs: rest, link: { text: 'View the alert', url: mail.url } },
      },
      options,
    );
  }
}
