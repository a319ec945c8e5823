import type { PushedCommit } from '../../infra/bus.js';

/**
 * The established product's webhook payloads (its "Webhook events" page): same keys, same types,
 * so receivers written for it work unchanged. Fields of features Basalt lacks (labels, milestones,
 * time tracking, merge requests) keep their documented empty values.
 */

export const HOOK_EVENTS = {
  push: 'Push Hook',
  tag_push: 'Tag Push Hook',
  issue: 'Issue Hook',
  note: 'Note Hook',
} as const;
export type HookKind = keyof typeof HOOK_EVENTS;

/** The trigger names a delivery is logged under and the test endpoint takes. */
export const TRIGGERS = [
  'push_events',
  'tag_push_events',
  'issues_events',
  'confidential_issues_events',
  'note_events',
  'confidential_note_events',
] as const;
export type Trigger = (typeof TRIGGERS)[number];

export interface ProjectFacts {
  id: number;
  name: string;
  description: string;
  fullPath: string;
  /** The namespace's display name. */
  namespace: string;
  visibility: string;
  defaultBranch: string;
}

export interface UserFacts {
  id: number;
  name: string;
  username: string;
  email: string;
}

export interface IssueFacts {
  id: number;
  iid: number;
  projectId: number;
  title: string;
  description: string;
  state: string;
  issueType: string;
  confidential: boolean;
  authorId: number | null;
  closedAt: number | null;
  createdAt: number;
  updatedAt: number;
  /** Assignees' ids, ascending (none when absent). */
  assigneeIds?: readonly number[];
  /** `YYYY-MM-DD` or null. */
  dueDate?: string | null;
}

export interface NoteFacts {
  id: number;
  body: string;
  authorId: number | null;
  projectId: number | null;
  createdAt: number;
  updatedAt: number;
}

const VISIBILITY_LEVEL: Record<string, number> = { private: 0, internal: 10, public: 20 };

/** `2013-12-03T17:15:43Z`: the issue payload's time format. */
export const isoUtc = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** `2015-05-17 18:08:09 UTC`: the note payload's time format. */
export const railsUtc = (ms: number): string => `${isoUtc(ms).replace('T', ' ').replace('Z', '')} UTC`;

/** The SSH clone address receivers expect (Basalt serves git over HTTP only; the keys stay for receivers). */
function sshUrl(base: string, fullPath: string): string {
  return `git@${new URL(base).hostname}:${fullPath}.git`;
}

export function projectAttrs(p: ProjectFacts, base: string) {
  const web = `${base}/${p.fullPath}`;
  const ssh = sshUrl(base, p.fullPath);
  const http = `${web}.git`;
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    web_url: web,
    avatar_url: null,
    git_ssh_url: ssh,
    git_http_url: http,
    namespace: p.namespace,
    visibility_level: VISIBILITY_LEVEL[p.visibility] ?? 0,
    path_with_namespace: p.fullPath,
    default_branch: p.defaultBranch,
    ci_config_path: null,
    homepage: web,
    url: ssh,
    ssh_url: ssh,
    http_url: http,
  };
}

function repositoryAttrs(p: ProjectFacts, base: string) {
  const web = `${base}/${p.fullPath}`;
  return {
    name: p.name,
    url: sshUrl(base, p.fullPath),
    description: p.description,
    homepage: web,
    git_http_url: `${web}.git`,
    git_ssh_url: sshUrl(base, p.fullPath),
    visibility_level: VISIBILITY_LEVEL[p.visibility] ?? 0,
  };
}

function userAttrs(u: UserFacts) {
  return { id: u.id, name: u.name, username: u.username, avatar_url: null, email: u.email };
}

export interface PushFacts {
  project: ProjectFacts;
  user: UserFacts;
  /** Branch or tag name, without `refs/heads/` or `refs/tags/`. */
  ref: string;
  refType: 'branch' | 'tag';
  before: string | null;
  after: string | null;
  commits: readonly PushedCommit[];
  totalCommits: number;
  tagMessage: string | null;
}

const ZERO = '0000000000000000000000000000000000000000';

/** A Push Hook (branch) or Tag Push Hook (tag) body. */
export function pushPayload(f: PushFacts, base: string) {
  const tag = f.refType === 'tag';
  const web = `${base}/${f.project.fullPath}`;
  return {
    object_kind: tag ? 'tag_push' : 'push',
    event_name: tag ? 'tag_push' : 'push',
    before: f.before ?? ZERO,
    after: f.after ?? ZERO,
    ref: `${tag ? 'refs/tags/' : 'refs/heads/'}${f.ref}`,
    ref_protected: false,
    checkout_sha: f.after,
    message: tag ? f.tagMessage : null,
    user_id: f.user.id,
    user_name: f.user.name,
    user_username: f.user.username,
    user_email: f.user.email,
    user_avatar: null,
    project_id: f.project.id,
    project: projectAttrs(f.project, base),
    commits: f.commits.map((c) => ({
      id: c.id,
      message: c.message,
      title: c.title,
      timestamp: c.timestamp,
      url: `${web}/-/commit/${c.id}`,
      author: { name: c.authorName, email: c.authorEmail },
      added: c.added,
      modified: c.modified,
      removed: c.removed,
    })),
    total_commits_count: f.totalCommits,
    push_options: {},
    repository: repositoryAttrs(f.project, base),
  };
}

export type IssueAction = 'open' | 'close' | 'reopen' | 'update';
/** Columns an edit changed, before and after (the established product's `changes`). */
export type IssueChanges = Record<string, { previous: unknown; current: unknown }>;

function issueAttrs(i: IssueFacts, base: string, fullPath: string) {
  return {
    author_id: i.authorId,
    closed_at: i.closedAt === null ? null : isoUtc(i.closedAt),
    confidential: i.confidential,
    created_at: isoUtc(i.createdAt),
    description: i.description,
    discussion_locked: null,
    due_date: i.dueDate ?? null,
    id: i.id,
    iid: i.iid,
    last_edited_at: null,
    last_edited_by_id: null,
    milestone_id: null,
    moved_to_id: null,
    duplicated_to_id: null,
    project_id: i.projectId,
    relative_position: null,
    state_id: i.state === 'closed' ? 2 : 1,
    time_estimate: 0,
    title: i.title,
    updated_at: isoUtc(i.updatedAt),
    updated_by_id: null,
    type: i.issueType === 'incident' ? 'Incident' : 'Issue',
    url: `${base}/${fullPath}/-/issues/${i.iid}`,
    total_time_spent: 0,
    time_change: 0,
    human_total_time_spent: null,
    human_time_change: null,
    human_time_estimate: null,
    assignee_ids: [...(i.assigneeIds ?? [])],
    assignee_id: i.assigneeIds?.[0] ?? null,
    labels: [] as unknown[],
    state: i.state,
    severity: 'unknown',
    customer_relations_contacts: [] as unknown[],
  };
}

/** What closing or reopening changed, as the established product's `changes` shows it. */
function stateChanges(action: IssueAction, issue: IssueFacts): IssueChanges {
  if (action === 'close')
    return {
      state_id: { previous: 1, current: 2 },
      closed_at: { previous: null, current: issue.closedAt === null ? null : isoUtc(issue.closedAt) },
    };
  if (action === 'reopen') return { state_id: { previous: 2, current: 1 } };
  return {};
}

/**
 * An Issue Hook body (incidents too: `object_attributes.type` is `Incident`). `assignees` is
 * there only when the issue has some, as the established product sends it; a change of
 * assignees shows in `changes.assignees` as user objects before and after.
 */
export function issuePayload(
  f: {
    project: ProjectFacts;
    user: UserFacts;
    issue: IssueFacts;
    action: IssueAction;
    changes?: IssueChanges;
    assignees?: readonly UserFacts[];
  },
  base: string,
) {
  return {
    object_kind: 'issue',
    event_type: f.issue.confidential ? 'confidential_issue' : 'issue',
    user: userAttrs(f.user),
    project: projectAttrs(f.project, base),
    object_attributes: { ...issueAttrs(f.issue, base, f.project.fullPath), action: f.action },
    labels: [] as unknown[],
    changes: { ...stateChanges(f.action, f.issue), ...f.changes },
    repository: {
      name: f.project.name,
      url: sshUrl(base, f.project.fullPath),
      description: f.project.description,
      homepage: `${base}/${f.project.fullPath}`,
    },
    ...(f.assignees?.length ? { assignees: f.assignees.map(userAttrs) } : {}),
  };
}

/** `changes.assignees` as the established product sends it: user objects before and after. */
export function assigneeChanges(previous: readonly UserFacts[], current: readonly UserFacts[]) {
  return { previous: previous.map(userAttrs), current: current.map(userAttrs) };
}

/** A Note Hook body for a comment on an issue. */
export function notePayload(
  f: { project: ProjectFacts; user: UserFacts; issue: IssueFacts; note: NoteFacts; action: 'create' | 'update' },
  base: string,
) {
  const issueUrl = `${base}/${f.project.fullPath}/-/issues/${f.issue.iid}`;
  return {
    object_kind: 'note',
    event_type: f.issue.confidential ? 'confidential_note' : 'note',
    user: userAttrs(f.user),
    project_id: f.project.id,
    project: projectAttrs(f.project, base),
    object_attributes: {
      attachment: null,
      author_id: f.note.authorId,
      change_position: null,
      commit_id: null,
      created_at: railsUtc(f.note.createdAt),
      discussion_id: `note-${f.note.id}`,
      id: f.note.id,
      line_code: null,
      note: f.note.body,
      noteable_id: f.issue.id,
      noteable_type: 'Issue',
      original_position: null,
      position: null,
      project_id: f.note.projectId,
      resolved_at: null,
      resolved_by_id: null,
      resolved_by_push: null,
      st_diff: null,
      system: false,
      type: null,
      updated_at: railsUtc(f.note.updatedAt),
      updated_by_id: null,
      description: f.note.body,
      url: `${issueUrl}#note_${f.note.id}`,
      action: f.action,
    },
    repository: {
      name: f.project.name,
      url: sshUrl(base, f.project.fullPath),
      description: f.project.description,
      homepage: `${base}/${f.project.fullPath}`,
    },
    issue: { ...issueAttrs(f.issue, base, f.project.fullPath), labels: [] as unknown[] },
  };
}

/** The request headers of a delivery (the token only when the hook has one). */
export function deliveryHeaders(input: {
  event: string;
  version: string;
  instance: string;
  eventUuid: string;
  webhookUuid: string;
  idempotencyKey: string;
  token: string | null;
}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': `GitLab/${input.version}`,
    'X-Gitlab-Event': input.event,
    'X-Gitlab-Webhook-UUID': input.webhookUuid,
    'X-Gitlab-Instance': input.instance,
    'X-Gitlab-Event-UUID': input.eventUuid,
    'Idempotency-Key': input.idempotencyKey,
    ...(input.token ? { 'X-Gitlab-Token': input.token } : {}),
  };
}

/** Which trigger a payload goes under, for a hook's event flags and the delivery log. */
export function triggerOf(kind: HookKind, confidential: boolean): Trigger {
  switch (kind) {
    case 'push':
      return 'push_events';
    case 'tag_push':
      return 'tag_push_events';
    case 'issue':
      return confidential ? 'confidential_issues_events' : 'issues_events';
    case 'note':
      return confidential ? 'confidential_note_events' : 'note_events';
  }
}

export const TRIGGER_KIND: Record<Trigger, { kind: HookKind; confidential: boolean }> = {
  push_events: { kind: 'push', confidential: false },
  tag_push_events: { kind: 'tag_push', confidential: false },
  issues_events: { kind: 'issue', confidential: false },
  confidential_issues_events: { kind: 'issue', confidential: true },
  note_events: { kind: 'note', confidential: false },
  confidential_note_events: { kind: 'note', confidential: true },
};

/** X-Gitlab-Event of each trigger: confidential issues and comments have their own (the established product's hook names). */
export const TRIGGER_EVENTS: Record<Trigger, string> = {
  push_events: HOOK_EVENTS.push,
  tag_push_events: HOOK_EVENTS.tag_push,
  issues_events: HOOK_EVENTS.issue,
  confidential_issues_events: 'Confidential Issue Hook',
  note_events: HOOK_EVENTS.note,
  confidential_note_events: 'Confidential Note Hook',
};
