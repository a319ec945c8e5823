import type { Database } from '../../infra/db/index.js';
import type { OutboxItem, SendResult } from '../../infra/outbox/index.js';
import type { ProjectRow } from '../projects/index.js';
import { ALERT_EMAIL_EVENT, type AlertMailItem, type AlertRecipients } from './ingest.service.js';
import { alertPagePath } from './incidents.service.js';

/**
 * The outbox job behind `ALERT_MAIL_KIND`: an alert that fired or was resolved becomes one
 * e-mail per recipient, found now (the maintainers as participants, each one's notification
 * level deciding) and queued in one transaction. Each e-mail's Message-ID is the item's with the
 * recipient added, so a retry after an uncertain commit queues nothing twice.
 */
export class AlertMailExpansion {
  constructor(
    private readonly db: Database,
    private readonly externalUrl: string,
    private readonly recipients: () => AlertRecipients | null,
    private readonly project: (id: number) => Promise<ProjectRow | undefined>,
    private readonly participants: (project: ProjectRow) => Promise<number[]>,
  ) {}

  async send(item: OutboxItem): Promise<SendResult> {
    const mail = item.payload as AlertMailItem;
    const source = this.recipients();
    // Mail turned off since, or the project removed: there is no one to tell.
    if (!source?.enabled) return { ok: true };
    const project = await this.project(mail.projectId);
    if (!project) return { ok: true };
    const to = await source.alertRecipients(project.id, ALERT_EMAIL_EVENT, await this.participants(project));
    if (to.size === 0) return { ok: true };
    const fired = mail.what === 'triggered';
    const subject = `${mail.projectPath} | ${fired ? 'Alert' : 'Resolved alert'}: ${mail.title}`.slice(0, 255);
    const text = [
      `${fired ? 'An alert fired' : 'An alert was resolved'} in ${mail.projectPath}.`,
      '',
      `Title: ${mail.title}`,
      `Severity: ${mail.severity}`,
      `Started: ${new Date(mail.startedAt).toISOString()}`,
      ...(mail.description ? [`Description: ${mail.description}`] : []),
    ].join('\n');
    // The page at the project's address now (a renamed project's old one would redirect anyway).
    const url = `${this.externalUrl}${alertPagePath(project.full_path, mail.iid)}`;
    await this.db.transaction().execute(async (trx) => {
      for (const [userId, recipient] of to) {
        await source.queueAlertEmail(
          trx,
          { userId, ...recipient, projectId: project.id, projectPath: mail.projectPath, subject, text, url },
          { messageId: item.messageId.replace('@', `.u${userId}@`) },
        );
      }
    });
    return { ok: true };
  }
}
