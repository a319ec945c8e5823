import type { DomainEvent } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database, Executor } from '../../infra/db/index.js';
import type { JobQueue } from '../../infra/jobs/index.js';
import { toActorUser, type IdentityModule, type UserRow } from '../identity/index.js';
import type { IssueRow, ProjectRow, ProjectsModule } from '../projects/index.js';
import { accountSubject, accountTemplate, type AccountMailFacts } from './account-mail.rules.js';
import { issueSubject, issueTemplate } from './issue-mail.rules.js';
import { mentionedUsernames } from './mentions.rules.js';
import type { NotificationMailer } from './notification-mail.service.js';
import type { NotificationsService } from './notifications.service.js';

export const DISPATCH_JOB = 'notifications.dispatch';
/** The daily reminder of personal access tokens that expire within 7 days. */
export const TOKEN_EXPIRY_JOB = 'notifications.token_expiry';
/** The daily `issue_due` mail: open issues due tomorrow (UTC), as the established product sends it at 00:50. */
export const ISSUE_DUE_JOB = 'notifications.issue_due';
const ISSUE_DUE_MINUTE = 50;
const DAY = 86_400_000;
const EXPIRY_WINDOW = 7 * DAY;

/** What the dispatch job needs to know about the change (the bus event, minus what it can read back). */
type Dispatch =
  | { event: 'new_issue' | 'close_issue' | 'reopen_issue'; projectId: number; issueId: number; actorId: number; at: number }
  | { event: 'new_note'; projectId: number; noteId: number; actorId: number; at: number }
  | { event: 'reassign_issue'; projectId: number; issueId: number; actorId: number; previousAssigneeIds: number[]; at: number }
  | { event: 'password_changed'; userId: number; at: number }
  | { event: 'token_created'; userId: number; tokenId: number; name: string; scopes: string[]; expiresAt: string | null; at: number };

/** Commenters read for the participants of an issue: enough for any real thread, bounded for a hostile one. */
const MAX_NOTES = 1_000;

export interface DispatchDeps {
  db: Database;
  clock: Clock;
  jobs: JobQueue;
  service: NotificationsService;
  mailer: NotificationMailer;
  identity: IdentityModule;
  projects: ProjectsModule;
  externalUrl: string;
}

/** The dispatch a domain event asks for, if it sends mail at all. */
function dispatchOf(event: DomainEvent): Dispatch | null {
  if (event.type === 'issue_opened' || event.type === 'issue_closed' || event.type === 'issue_reopened') {
    const kind = ({ issue_opened: 'new_issue', issue_closed: 'close_issue', issue_reopened: 'reopen_issue' } as const)[event.type];
    return { event: kind, projectId: event.projectId, issueId: event.issueId, actorId: event.authorId, at: event.at };
  }
  if (event.type === 'issue_reassigned') {
    const { projectId, issueId, authorId, previousAssigneeIds, at } = event;
    return { event: 'reassign_issue', projectId, issueId, actorId: authorId, previousAssigneeIds, at };
  }
  if (event.type === 'note_created' && event.projectId !== null) {
    return { event: 'new_note', projectId: event.projectId, noteId: event.noteId, actorId: event.authorId, at: event.at };
  }
  // Account mails ride on the audit trail's events, published in the change's transaction.
  if (event.type === 'audited' && event.entry.entityType === 'User') {
    const { entry } = event;
    if (entry.eventName === 'user_password_changed') return { event: 'password_changed', userId: entry.entityId, at: event.at };
    if (entry.eventName === 'personal_access_token_created') {
      const scopes = entry.details?.scopes;
      const expires = entry.details?.expires_at;
      return {
        event: 'token_created',
        userId: entry.entityId,
        tokenId: entry.targetId ?? 0,
        name: entry.targetDetails ?? '',
        scopes: Array.isArray(scopes) ? scopes.map(String) : [],
        expiresAt: typeof expires === 'string' ? expires : null,
        at: event.at,
      };
    }
  }
  return null;
}

/**
 * Notification mail in two steps. The bus subscriber runs in the publisher's transaction and
 * only enqueues a dispatch job there (so a change that rolls back mails nobody, and a committed
 * one is never forgotten), without reading anything: working out recipients reads settings,
 * memberships and the thread, which must not lengthen the writer's transaction. The job then
 * resolves the recipients and writes one outbox item per recipient in one transaction; each
 * item's Message-ID is derived from the change and the recipient, so a retried job queues nothing twice.
 */
export function notificationJobs(deps: DispatchDeps) {
  const { jobs, service, mailer, identity, projects } = deps;

  async function onEvent(event: DomainEvent, executor: Executor): Promise<void> {
    if (!mailer.enabled) return;
    const dispatch = dispatchOf(event);
    if (dispatch) await jobs.enqueue(executor, DISPATCH_JOB, dispatch);
  }

  async function canSee(user: UserRow, project: ProjectRow, issue: IssueRow): Promise<boolean> {
    const actor = { user: toActorUser(user), credential: { kind: 'session' as const, id: 0, scopes: null } };
    const level = await projects.access.projectLevel(actor, project);
    return projects.access.canSee(actor, project.visibility, level) && projects.issues.canSee(issue, actor, level);
  }

  /** Participants of an issue: its author, assignees and commenters (reference §1.7); `assignees` ascending. */
  async function participantsOf(issue: IssueRow): Promise<{ participants: number[]; assignees: number[] }> {
    const [thread, byIssue] = await Promise.all([
      projects.issues.listNotes(issue, 'asc', MAX_NOTES, 0),
      projects.issues.assigneesOf([issue.id]),
    ]);
    const assignees = byIssue.get(issue.id) ?? [];
    const ids = [issue.author_id, ...assignees, ...thread.rows.filter((n) => n.system === 0).map((n) => n.author_id)];
    return { participants: [...new Set(ids.filter((id): id is number => id !== null))], assignees };
  }

  /** `Name (@username)` of each user, for the reassignment mail. */
  async function namesOf(ids: readonly number[]): Promise<string[]> {
    const users = await identity.users.mapByIds(ids);
    return ids.flatMap((id) => {
      const user = users.get(id);
      return user ? [`${user.name} (@${user.username})`] : [];
    });
  }

  /**
   * Mails the participants of each open issue due tomorrow (UTC) whose level asks for
   * `issue_due`, the author included (it is nobody's action), once per issue and due date: the
   * message id names both, so a rerun the same day queues nothing new.
   */
  async function remindDueIssues(now: number): Promise<number> {
    const tomorrow = new Date(now + DAY).toISOString().slice(0, 10);
    let queued = 0;
    let afterId = 0;
    for (let pages = 0; pages < 10_000; pages += 1) {
      const due = await projects.issues.listOpenDueOn(tomorrow, afterId, 100);
      for (const issue of due) {
        afterId = issue.id;
        const project = await projects.projects.findById(issue.project_id);
        if (!project || project.pending_delete) continue;
        const { participants } = await participantsOf(issue);
        const watchers = await service.watcherIds(project.id);
        const recipients = await service.recipientDetails(
          project.id,
          'issue_due',
          { participants },
          { extra: [...participants, ...watchers], canSee: (user) => canSee(user, project, issue) },
        );
        if (recipients.length === 0) continue;
        const emails = await service.notificationEmails(recipients.map((r) => r.userId));
        const facts = {
          event: 'issue_due' as const,
          project: { name: project.name, full_path: project.full_path },
          issue: { iid: issue.iid, title: issue.title, description: issue.description, confidential: issue.confidential === 1 },
          actor: { name: '', username: '' },
          url: `${deps.externalUrl}/${project.full_path}/-/issues/${issue.iid}`,
          dueDate: tomorrow,
        };
        const subject = issueSubject(facts);
        const template = issueTemplate(facts);
        await deps.db.transaction().execute(async (trx) => {
          for (const recipient of recipients) {
            const to = emails.get(recipient.userId);
            if (!to) continue;
            await mailer.queueProjectMail(
              trx,
              { userId: recipient.userId, to, reason: recipient.reason, project, subject, template, thread: `issue_${issue.id}` },
              { messageId: `issue-due-${issue.id}-${tomorrow}-u${recipient.userId}@${mailer.host}` },
            );
            queued += 1;
          }
        });
      }
      if (due.length < 100) break;
    }
    return queued;
  }

  async function runAccount(dispatch: Extract<Dispatch, { event: 'password_changed' | 'token_created' }>): Promise<void> {
    const user = await identity.users.findById(dispatch.userId);
    if (!user || user.state !== 'active' || user.bot === 1) return;
    const to = (await service.notificationEmails([user.id])).get(user.id);
    if (!to) return;
    const host = mailer.host;
    const facts: AccountMailFacts =
      dispatch.event === 'password_changed'
        ? { kind: 'password_changed', username: user.username, host, at: dispatch.at }
        : {
            kind: 'token_created',
            username: user.username,
            host,
            at: dispatch.at,
            tokenName: dispatch.name,
            scopes: dispatch.scopes,
            expiresAt: dispatch.expiresAt,
            url: `${deps.externalUrl}/-/user_settings/personal_access_tokens`,
          };
    const change = dispatch.event === 'password_changed' ? `password-${user.id}-${dispatch.at}` : `token-${dispatch.tokenId}`;
    await mailer.queueAccountMail(
      deps.db,
      { to, subject: accountSubject(facts), template: accountTemplate(facts) },
      { messageId: `${change}@${mailer.host}` },
    );
  }

  async function run(dispatch: Dispatch): Promise<void> {
    if (dispatch.event === 'password_changed' || dispatch.event === 'token_created') return runAccount(dispatch);
    const project = await projects.projects.findById(dispatch.projectId);
    if (!project || project.pending_delete) return;
    const note = dispatch.event === 'new_note' ? await projects.issues.findNote(dispatch.noteId) : undefined;
    if (dispatch.event === 'new_note' && (!note || note.noteable_type !== 'Issue')) return;
    const issueId = dispatch.event === 'new_note' ? (note?.noteable_id as number) : dispatch.issueId;
    const issue = await projects.issues.findById(issueId);
    const actor = await identity.users.findById(dispatch.actorId);
    if (!issue || !actor) return;

    const { participants, assignees } = await participantsOf(issue);
    const text =
      dispatch.event === 'new_note' ? (note?.body ?? '') : dispatch.event === 'new_issue' ? `${issue.title}\n${issue.description}` : '';
    const mentioned: number[] = [];
    for (const username of mentionedUsernames(text)) {
      const user = await identity.users.findByUsername(username);
      if (user) mentioned.push(user.id);
    }
    // A reassignment counts as a mention of the new and the previous assignees (reference §1.7).
    const previous = dispatch.event === 'reassign_issue' ? dispatch.previousAssigneeIds : [];
    if (dispatch.event === 'reassign_issue') mentioned.push(...assignees, ...previous);
    const watchers = await service.watcherIds(project.id);
    const resolved = await service.recipientDetails(
      project.id,
      dispatch.event,
      { participants, mentioned },
      {
        extra: [...participants, ...mentioned, ...watchers],
        exclude: actor.id,
        canSee: (user) => canSee(user, project, issue),
      },
    );
    // The established product names assignees' reason `assigned` on new and reassigned issues.
    const assignedReason = dispatch.event === 'new_issue' || dispatch.event === 'reassign_issue';
    const recipients = resolved.map((r) => (assignedReason && assignees.includes(r.userId) ? { ...r, reason: 'assigned' as const } : r));
    if (recipients.length === 0) return;
    const emails = await service.notificationEmails(recipients.map((r) => r.userId));
    const facts = {
      event: dispatch.event,
      project: { name: project.name, full_path: project.full_path },
      issue: { iid: issue.iid, title: issue.title, description: issue.description, confidential: issue.confidential === 1 },
      actor: { name: actor.name, username: actor.username },
      url: `${deps.externalUrl}/${project.full_path}/-/issues/${issue.iid}${note ? `#note_${note.id}` : ''}`,
      ...(note ? { note: note.body } : {}),
      ...(dispatch.event === 'reassign_issue' ? { assignees: await namesOf(assignees), previousAssignees: await namesOf(previous) } : {}),
    };
    const subject = issueSubject(facts);
    const template = issueTemplate(facts);
    // A reassignment names the assignees it replaced: two in the same millisecond stay apart.
    const from = dispatch.event === 'reassign_issue' ? `-from-${previous.join('_') || 'none'}` : '';
    const change =
      dispatch.event === 'new_note' ? `note-${dispatch.noteId}` : `issue-${dispatch.issueId}-${dispatch.event}-${dispatch.at}${from}`;
    await deps.db.transaction().execute(async (trx) => {
      for (const recipient of recipients) {
        const to = emails.get(recipient.userId);
        if (!to) continue;
        await mailer.queueProjectMail(
          trx,
          { userId: recipient.userId, to, reason: recipient.reason, project, subject, template, thread: `issue_${issue.id}` },
          { messageId: `${change}-u${recipient.userId}@${mailer.host}` },
        );
      }
    });
  }

  /**
   * Mails each owner of an active personal token expiring within 7 days, once per token: the
   * message id names the token, and the outbox keeps a sent item longer than the window.
   */
  async function remindExpiringTokens(now: number): Promise<number> {
    let queued = 0;
    for (let offset = 0; offset < 100_000; offset += 100) {
      const page = await identity.tokens.list({ kinds: ['personal'], state: 'active', expiringBefore: now + EXPIRY_WINDOW }, 100, offset);
      for (const token of page.rows) {
        const user = await identity.users.findById(token.user_id);
        if (!user || user.state !== 'active' || user.bot === 1 || token.expires_at === null) continue;
        const to = (await service.notificationEmails([user.id])).get(user.id);
        if (!to) continue;
        const facts: AccountMailFacts = {
          kind: 'token_expiring',
          username: user.username,
          host: mailer.host,
          at: now,
          tokenName: token.name,
          expiresAt: new Date(token.expires_at).toISOString().slice(0, 10),
          url: `${deps.externalUrl}/-/user_settings/personal_access_tokens`,
        };
        await mailer.queueAccountMail(
          deps.db,
          { to, subject: accountSubject(facts), template: accountTemplate(facts) },
          { messageId: `token-expiring-${token.id}@${mailer.host}` },
        );
        queued += 1;
      }
      if (page.rows.length < 100) break;
    }
    return queued;
  }

  const scheduleExpiry = (runAt: number, currentJobId = 0) =>
    deps.db.transaction().execute((trx) => jobs.enqueueUnlessPending(trx, TOKEN_EXPIRY_JOB, runAt, currentJobId));

  jobs.register(DISPATCH_JOB, async (payload) => run(payload as Dispatch));
  jobs.register(TOKEN_EXPIRY_JOB, async (_payload, context) => {
    const now = deps.clock.now();
    if (mailer.enabled) context.log.info({ queued: await remindExpiringTokens(now) }, 'token expiry reminders queued');
    await scheduleExpiry(now + DAY, context.jobId);
  });
  /** The next 00:50 UTC after `now`. */
  const nextDueRun = (now: number) => {
    const today = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate(), 0, ISSUE_DUE_MINUTE);
    return today > now ? today : today + DAY;
  };
  const scheduleDue = (runAt: number, currentJobId = 0) =>
    deps.db.transaction().execute((trx) => jobs.enqueueUnlessPending(trx, ISSUE_DUE_JOB, runAt, currentJobId));
  jobs.register(ISSUE_DUE_JOB, async (_payload, context) => {
    const now = deps.clock.now();
    if (mailer.enabled) context.log.info({ queued: await remindDueIssues(now) }, 'issue due mails queued');
    await scheduleDue(nextDueRun(now), context.jobId);
  });
  return {
    onEvent,
    remindExpiringTokens,
    remindDueIssues,
    schedule: async () => {
      await scheduleExpiry(deps.clock.now() + 60_000);
      // A minute after start (a rerun the same day sends nothing twice), then daily at 00:50 UTC.
      await scheduleDue(deps.clock.now() + 60_000);
    },
  };
}
