import type { DomainEvent, ErrorReport } from '../../infra/bus.js';
import type { DispatchDeps } from './notifications.jobs.js';
import type { Executor } from '../../infra/db/index.js';
import { errorPagePath } from '../error-tracking/index.js';
import { AccessLevel } from '../projects/index.js';
import { accountSubject, accountTemplate, type AccountMailFacts } from './account-mail.rules.js';
import type { MailReason } from './notifications.rules.js';
import { errorSubject, errorTemplate, projectMovedSubject, projectMovedTemplate } from './project-mail.rules.js';
import type { MailTemplate } from './mail-template.rules.js';

/** The mails of a moved project, a sign-in from a new address and a new or regressed error. */
export const EVENT_MAIL_JOB = 'notifications.event_mail';

/** What the job needs to know about the change (the bus event, minus what it can read back). */
type EventMail =
  { event: 'moved_project'; projectId: number; fromPath: string; toPath: string; at: number } | ({ event: 'error_reported' } & ErrorReport);

type EventMailDeps = Omit<DispatchDeps, 'clock'>;

function eventMailOf(event: DomainEvent): EventMail | null {
  if (event.type === 'project_moved') {
    const { projectId, fromPath, toPath, at } = event;
    return { event: 'moved_project', projectId, fromPath, toPath, at };
  }
  if (event.type === 'error_reported') {
    const { type: _type, ...rest } = event;
    return { event: 'error_reported', ...rest };
  }
  return null;
}

/**
 * A new sign-in address mails one known person: the mail is written to the outbox by the bus
 * subscriber, in the sign-in's transaction (two reads, only for a new address). The project mails
 * work like the issue mails (notifications.jobs.ts): the subscriber only queues a job in the
 * publisher's transaction (a rename, an error ingestion: neither waits for recipients to be worked
 * out, and neither mails for a change that rolled back); the job resolves the recipients and
 * writes one outbox item per recipient in one transaction, each Message-ID derived from the
 * change and the recipient so a retried job queues nothing twice.
 *
 * - moved_project: the project's members whose level asks for it (the established product's
 *   `project_was_moved`: `participating`, `watch`, `custom` with the event), the mover included.
 * - new sign-in: the user, whatever their levels (an account mail).
 * - new or regressed error: Maintainers and Owners whose level is not `disabled` (docs/decisions.md).
 */
export function eventMailJobs(deps: EventMailDeps) {
  const { jobs, service, mailer, identity, projects } = deps;

  async function onEvent(event: DomainEvent, executor: Executor): Promise<void> {
    if (!mailer.enabled) return;
    if (event.type === 'signed_in_from_new_address') return queueSignIn(event, executor);
    const mail = eventMailOf(event);
    if (mail) await jobs.enqueue(executor, EVENT_MAIL_JOB, mail);
  }

  async function queueSignIn(mail: Extract<DomainEvent, { type: 'signed_in_from_new_address' }>, executor: Executor): Promise<void> {
    const user = await identity.users.findById(mail.userId, executor);
    if (!user || user.state !== 'active' || user.bot === 1) return;
    const to = await service.notificationEmailOf(user, executor);
    const facts: AccountMailFacts = {
      kind: 'new_sign_in',
      username: user.username,
      name: user.name,
      host: mailer.host,
      at: mail.at,
      ip: mail.ip,
      userAgent: mail.userAgent,
      url: `${deps.externalUrl}/-/user_settings/password/edit`,
    };
    await mailer.queueAccountMail(
      executor,
      { to, subject: accountSubject(facts), template: accountTemplate(facts) },
      { messageId: `sign-in-${user.id}-${mail.at}@${mailer.host}` },
    );
  }

  async function runProject(mail: EventMail): Promise<void> {
    const project = await projects.projects.findById(mail.projectId);
    if (!project || project.pending_delete) return;
    const recipients: Array<{ userId: number; reason: MailReason }> =
      mail.event === 'moved_project'
        ? await service.recipientDetails(project.id, 'moved_project')
        : await service.membersNotDisabled(project.id, AccessLevel.MAINTAINER);
    if (recipients.length === 0) return;
    const emails = await service.notificationEmails(recipients.map((r) => r.userId));
    const projectFacts = { name: project.name, full_path: project.full_path };
    let subject: string;
    let template: Omit<MailTemplate, 'footer'>;
    let change: string;
    if (mail.event === 'moved_project') {
      const facts = {
        project: projectFacts,
        fromPath: mail.fromPath,
        url: `${deps.externalUrl}/${project.full_path}`,
        cloneUrl: `${deps.externalUrl}/${project.full_path}.git`,
      };
      subject = projectMovedSubject(facts);
      template = projectMovedTemplate(facts);
      change = `project-moved-${project.id}-${mail.at}`;
    } else {
      const facts = { ...mail, project: projectFacts, url: `${deps.externalUrl}${errorPagePath(project.full_path, mail.errorId)}` };
      subject = errorSubject(facts);
      template = errorTemplate(facts);
      change = `error-${mail.errorId}-${mail.regressed ? `regressed-${mail.at}` : 'new'}`;
    }
    await deps.db.transaction().execute(async (trx) => {
      for (const recipient of recipients) {
        const to = emails.get(recipient.userId);
        if (!to) continue;
        await mailer.queueProjectMail(
          trx,
          { userId: recipient.userId, to, reason: recipient.reason, project, subject, template },
          { messageId: `${change}-u${recipient.userId}@${mailer.host}` },
        );
      }
    });
  }

  jobs.register(EVENT_MAIL_JOB, async (payload) => runProject(payload as EventMail));
  return { onEvent };
}
