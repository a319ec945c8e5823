import { randomUUID } from 'node:crypto';
import type { Tier } from '../../config/index.js';
import type { DomainEvent, PushedRef } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Executor } from '../../infra/db/index.js';
import type { Outbox } from '../../infra/outbox/index.js';
import type { UsersService } from '../identity/index.js';
import type { IssueRow, IssuesService, NoteRow, ProjectRow, ProjectsService } from '../projects/index.js';
import { branchMatches } from './branch-filter.rules.js';
import { WEBHOOK_OUTBOX_KIND, type QueuedDelivery } from './deliveries.service.js';
import { alertStatus } from './failure.rules.js';
import type { HookRow, HooksRepository } from './hooks.repository.js';
import {
  TRIGGER_EVENTS,
  assigneeChanges,
  issuePayload,
  notePayload,
  pushPayload,
  triggerOf,
  type IssueAction,
  type IssueChanges,
  type IssueFacts,
  type ProjectFacts,
  type Trigger,
  type UserFacts,
} from './payloads.rules.js';

/**
 * A push changing more refs than this calls no hooks (the established product's
 * `push_event_hooks_limit`, default 3): a mass push of tags or branches would flood receivers.
 */
export const PUSH_HOOKS_LIMIT = 3;

const ISSUE_ACTIONS: Partial<Record<DomainEvent['type'], IssueAction>> = {
  issue_opened: 'open',
  issue_closed: 'close',
  issue_reopened: 'reopen',
};

export const issueFacts = (i: IssueRow): IssueFacts => ({
  id: i.id,
  iid: i.iid,
  projectId: i.project_id,
  title: i.title,
  description: i.description,
  state: i.state,
  issueType: i.issue_type,
  confidential: i.confidential === 1,
  authorId: i.author_id,
  closedAt: i.closed_at,
  createdAt: i.created_at,
  updatedAt: i.updated_at,
  dueDate: i.due_date,
});

export const noteFacts = (n: NoteRow) => ({
  id: n.id,
  body: n.body,
  authorId: n.author_id,
  projectId: n.project_id,
  createdAt: n.created_at,
  updatedAt: n.updated_at,
});

/**
 * Turns domain events into queued deliveries, inside the publisher's transaction: an issue that
 * rolls back sends nothing, a committed one is never lost. Every read uses the publisher's
 * executor (on SQLite the only connection is inside that transaction).
 */
export class HookTriggers {
  constructor(
    private readonly hooks: HooksRepository,
    private readonly outbox: Outbox,
    private readonly clock: Clock,
    private readonly tier: Tier,
    private readonly externalUrl: string,
    private readonly ports: { projects: ProjectsService; issues: IssuesService; users: UsersService },
  ) {}

  handle = async (event: DomainEvent, executor: Executor): Promise<void> => {
    // Only pushes, issues and comments call hooks; every other event passes by.
    // eslint-disable-next-line @typescript-eslint/switch-exhaustiveness-check
    switch (event.type) {
      case 'push_received':
        return this.onPush(event.projectId, event.authorId, event.refs, executor);
      case 'issue_opened':
      case 'issue_closed':
      case 'issue_reopened':
        return this.onIssue(event.projectId, event.issueId, event.authorId, ISSUE_ACTIONS[event.type] ?? 'update', {}, executor);
      case 'issue_updated':
        return this.onIssue(event.projectId, event.issueId, event.authorId, 'update', event.changes, executor);
      case 'note_created':
      case 'note_updated':
        return event.projectId === null
          ? undefined
          : this.onNote(event.projectId, event.noteId, event.authorId, event.type === 'note_created' ? 'create' : 'update', executor);
      default:
        return undefined;
    }
  };

  /**
   * The project (when it has hooks) with its hooks and those of the groups above it (group hooks
   * need Premium or Ultimate), executable ones only. A project without hooks costs two indexed
   * reads and no read of the project itself: issues opened by alerts pass here too.
   */
  async hooksFor(projectId: number, executor: Executor): Promise<{ project: ProjectRow; hooks: HookRow[] } | null> {
    const rows = this.hooks.on(executor);
    const own = await rows.forProject(projectId);
    const groupHooks = this.tier !== 'free' && (await rows.anyGroupHook());
    if (own.length === 0 && !groupHooks) return null;
    const project = await this.ports.projects.findById(projectId, executor);
    if (!project) return null;
    let inherited: HookRow[] = [];
    if (groupHooks) {
      const groups = (await this.ports.projects.ancestry(project, executor)).filter((n) => n.kind === 'group').map((n) => n.id);
      inherited = await rows.forGroups(groups);
    }
    const now = this.clock.now();
    const hooks = [...own, ...inherited].filter((hook) => alertStatus(hook, now) === 'executable');
    return hooks.length === 0 ? null : { project, hooks };
  }

  async projectFacts(project: ProjectRow, executor?: Executor): Promise<ProjectFacts> {
    const chain = await this.ports.projects.ancestry(project, executor);
    return {
      id: project.id,
      name: project.name,
      description: project.description,
      fullPath: project.full_path,
      namespace: chain.at(-1)?.name ?? '',
      visibility: project.visibility,
      defaultBranch: project.default_branch,
    };
  }

  async userFacts(userId: number, executor?: Executor): Promise<UserFacts> {
    const user = await this.ports.users.findById(userId, executor);
    return { id: userId, name: user?.name ?? '', username: user?.username ?? '', email: user?.email ?? '' };
  }

  private async enqueue(executor: Executor, hooks: readonly HookRow[], trigger: Trigger, event: string, body: unknown): Promise<void> {
    const eventUuid = randomUUID();
    for (const hook of hooks) {
      const delivery: QueuedDelivery = { hookId: hook.id, trigger, event, eventUuid, body };
      await this.outbox.enqueue(executor, WEBHOOK_OUTBOX_KIND, delivery, { messageId: `webhook-${eventUuid}-${hook.id}` });
    }
  }

  private async onPush(projectId: number, authorId: number, refs: readonly PushedRef[], executor: Executor): Promise<void> {
    if (refs.length > PUSH_HOOKS_LIMIT) return;
    const found = await this.hooksFor(projectId, executor);
    if (!found) return;
    const { project, hooks } = found;
    const [projectFacts, user] = [await this.projectFacts(project, executor), await this.userFacts(authorId, executor)];
    for (const ref of refs) {
      const tag = ref.refType === 'tag';
      const wanted = hooks.filter((h) =>
        tag
          ? h.tag_push_events === 1
          : h.push_events === 1 && branchMatches(h.branch_filter_strategy, h.push_events_branch_filter, ref.ref),
      );
      if (wanted.length === 0) continue;
      const body = pushPayload(
        {
          project: projectFacts,
          user,
          ref: ref.ref,
          refType: ref.refType,
          before: ref.commitFrom,
          after: ref.commitTo,
          commits: ref.commits ?? [],
          totalCommits: ref.commitCount,
          tagMessage: ref.tagMessage ?? null,
        },
        this.externalUrl,
      );
      const trigger = tag ? 'tag_push_events' : 'push_events';
      await this.enqueue(executor, wanted, trigger, TRIGGER_EVENTS[trigger], body);
    }
  }

  private async onIssue(
    projectId: number,
    issueId: number,
    actorId: number,
    action: IssueAction,
    changes: IssueChanges,
    executor: Executor,
  ): Promise<void> {
    const found = await this.hooksFor(projectId, executor);
    if (!found) return;
    const { project, hooks } = found;
    const issue = await this.ports.issues.findById(issueId, executor);
    if (!issue) return;
    const trigger = triggerOf('issue', issue.confidential === 1);
    const wanted = hooks.filter((h) => h[trigger] === 1);
    if (wanted.length === 0) return;
    const assigneeIds = (await this.ports.issues.assigneesOf([issue.id], executor)).get(issue.id) ?? [];
    const people = async (ids: unknown) => Promise.all((Array.isArray(ids) ? ids : []).map((id) => this.userFacts(Number(id), executor)));
    const moved = changes.assignees;
    const body = issuePayload(
      {
        project: await this.projectFacts(project, executor),
        user: await this.userFacts(actorId, executor),
        issue: { ...issueFacts(issue), assigneeIds },
        action,
        changes: moved ? { ...changes, assignees: assigneeChanges(await people(moved.previous), await people(moved.current)) } : changes,
        assignees: await people(assigneeIds),
      },
      this.externalUrl,
    );
    await this.enqueue(executor, wanted, trigger, TRIGGER_EVENTS[trigger], body);
  }

  private async onNote(projectId: number, noteId: number, actorId: number, action: 'create' | 'update', executor: Executor): Promise<void> {
    const found = await this.hooksFor(projectId, executor);
    if (!found) return;
    const { project, hooks } = found;
    const note = await this.ports.issues.findNote(noteId, executor);
    if (note?.noteable_type !== 'Issue') return;
    const issue = await this.ports.issues.findById(note.noteable_id, executor);
    if (!issue) return;
    const trigger = triggerOf('note', issue.confidential === 1);
    const wanted = hooks.filter((h) => h[trigger] === 1);
    if (wanted.length === 0) return;
    const body = notePayload(
      {
        project: await this.projectFacts(project, executor),
        user: await this.userFacts(actorId, executor),
        issue: { ...issueFacts(issue), assigneeIds: (await this.ports.issues.assigneesOf([issue.id], executor)).get(issue.id) ?? [] },
        note: noteFacts(note),
        action,
      },
      this.externalUrl,
    );
    await this.enqueue(executor, wanted, trigger, TRIGGER_EVENTS[trigger], body);
  }
}
