import type { Database } from '../../infra/db/index.js';
import type { OutboxItem, SendResult } from '../../infra/outbox/index.js';
import type { ProjectRow } from '../projects/index.js';
import { ALERT_EMAIL_EVENT, type AlertEmailRecipient, type AlertMailItem, type AlertRecipients } from './ingest.service.js';
import { alertPagePath } from './incidents.service.js';

/**
 * The outbox job behind `ALERT_MAIL_KIND`: each alert of an item (one ingest commit's alerts
 * that fired or were resolved) becomes one e-mail per recipient, found now (the maintainers as
 * participants, each one's notification level deciding), all queued in one transaction.
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
    const source = this.recipients();
    // Mail turned off since: there is no one to tell.
    if (!source?.enabled) return { ok: true };
    const payload = item.payload as { parts: AlertMailItem[] } | AlertMailItem;
    // An item queued before alerts were gathered per commit is one alert, its mails named as then.
    const parts = 'parts' in payload ? payload.parts.map((mail, i) => ({ mail, tag: `.a${i}` })) : [{ mail: payload, tag: '' }];
    const projects = new Map<number, { project: ProjectRow; to: ReadonlyMap<number, AlertEmailRecipient> } | null>();
    const emails: { userId: number; recipient: AlertEmailRecipient; mail: AlertMailItem; project: ProjectRow; tag: string }[] = [];
    for (const { mail, tag } of parts) {
      let target = projects.get(mail.projectId);
      if (target === undefined) {
        // A project removed since has no one to tell.
        const project = await this.project(mail.projectId);
        target = project
          ? { project, to: await source.alertRecipients(project.id, ALERT_EMAIL_EVENT, await this.participants(project)) }
          : null;
        projects.set(mail.projectId, target);
      }
      if (!target) continue;
      for (const [userId, recipient] of target.to) emails.push({ userId, recipient, mail, project: target.project, tag });
    }
    if (emails.length === 0) return { ok: true };
    // Each e-mail's Message-ID is the item's with the part and the recipient added: a retry after
    // an uncertain commit queues none of them twice.
    await this.db.transaction().execute(async (trx) => {
      for (const { userId, recipient, mail, project, tag } of emails) {
        await source.queueAlertEmail(
          trx,
          { userId, ...recipient, projectId: project.id, projectPath: mail.projectPath, ...this.compose(mail, project) },
          { messageId: item.messageId.replace('@', `${tag}.u${userId}@`) },
        );
      }
    });
    return { ok: true };
  }

  private compose(mail: AlertMailItem, project: ProjectRow): { subject: string; text: string; url: string } {
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
    return { subject, text, url: `${this.externalUrl}${alertPagePath(project.full_path, mail.iid)}` };
  }
}
