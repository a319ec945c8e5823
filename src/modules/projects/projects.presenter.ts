import { toIso, toIsoOrNull } from '../../infra/clock.js';
import { mapUserBasic, type UserRow } from '../identity/index.js';
import type { IssueRow, NoteRow } from './issues.repository.js';
import type { MemberRow } from './members.repository.js';
import type { NamespaceRow } from './namespaces.repository.js';
import type { ProjectRow } from './projects.repository.js';
import type { SnippetRow } from './snippets.repository.js';
import type { Static } from '@sinclair/typebox';
import type { GroupEntity, Member, Namespace, ProjectEntity, VisibilityValue } from './entities.schemas.js';
import type { IssueEntity, NoteEntity } from './issues.schemas.js';
import type { SnippetEntity } from './snippets.schemas.js';

export type Users = Map<number, UserRow>;

const userOrNull = (users: Users, id: number | null, base: string) => {
  const user = id === null ? undefined : users.get(id);
  return user ? mapUserBasic(user, base) : null;
};

export function mapNamespace(ns: NamespaceRow, base: string): Static<typeof Namespace> {
  return {
    id: ns.id,
    name: ns.name,
    path: ns.path,
    kind: ns.kind,
    full_path: ns.full_path,
    parent_id: ns.parent_id,
    avatar_url: null,
    web_url: ns.kind === 'group' ? `${base}/groups/${ns.full_path}` : `${base}/${ns.full_path}`,
  };
}

export function mapGroup(group: NamespaceRow, base: string, parentNames: string[] = []): GroupEntity {
  return {
    id: group.id,
    web_url: `${base}/groups/${group.full_path}`,
    name: group.name,
    path: group.path,
    description: group.description,
    visibility: group.visibility as VisibilityValue,
    full_name: [...parentNames, group.name].join(' / '),
    full_path: group.full_path,
    parent_id: group.parent_id,
    created_at: toIso(group.created_at),
    avatar_url: null,
    marked_for_deletion_on: null,
  };
}

export interface ProjectContext {
  namespace: NamespaceRow | undefined;
  owner?: UserRow | undefined;
  openIssues?: number | undefined;
  permissions?: { project_access: { access_level: number } | null; group_access: { access_level: number } | null } | undefined;
  admin: boolean;
}

export function mapProject(project: ProjectRow, base: string, context: ProjectContext): ProjectEntity {
  const ns = context.namespace;
  const nameWithNamespace = ns ? `${ns.kind === 'user' ? ns.name : ns.full_path.split('/').join(' / ')} / ${project.name}` : project.name;
  return {
    id: project.id,
    description: project.description,
    name: project.name,
    name_with_namespace: nameWithNamespace,
    path: project.path,
    path_with_namespace: project.full_path,
    created_at: toIso(project.created_at),
    updated_at: toIso(project.updated_at),
    default_branch: project.default_branch,
    tag_list: [],
    topics: [],
    http_url_to_repo: `${base}/${project.full_path}.git`,
    web_url: `${base}/${project.full_path}`,
    readme_url: null,
    avatar_url: null,
    forks_count: 0,
    star_count: 0,
    last_activity_at: toIso(project.last_activity_at),
    namespace: ns ? mapNamespace(ns, base) : null,
    visibility: project.visibility as VisibilityValue,
    ...(context.owner ? { owner: mapUserBasic(context.owner, base) } : {}),
    creator_id: project.creator_id,
    archived: false,
    empty_repo: false,
    issues_enabled: true,
    open_issues_count: context.openIssues ?? 0,
    ...(context.admin ? { repository_storage: project.repository_storage } : {}),
    ...(context.permissions ? { permissions: context.permissions } : {}),
  };
}

export function mapMember(member: MemberRow, user: UserRow, base: string): Static<typeof Member> {
  return {
    ...mapUserBasic(user, base),
    access_level: member.access_level,
    created_at: toIso(member.created_at),
    expires_at: member.expires_at === null ? null : new Date(member.expires_at).toISOString().slice(0, 10),
  };
}

/** An issue as the API shows it; `users` holds its author, closer and `assigneeIds` (ascending). */
export function mapIssue(
  issue: IssueRow,
  project: ProjectRow,
  base: string,
  users: Users,
  notesCount = 0,
  assigneeIds: readonly number[] = [],
): IssueEntity {
  const assignees = assigneeIds.flatMap((id) => {
    const user = users.get(id);
    return user ? [mapUserBasic(user, base)] : [];
  });
  return {
    id: issue.id,
    iid: issue.iid,
    project_id: issue.project_id,
    title: issue.title,
    description: issue.description,
    state: issue.state as IssueEntity['state'],
    created_at: toIso(issue.created_at),
    updated_at: toIso(issue.updated_at),
    closed_at: toIsoOrNull(issue.closed_at),
    closed_by: userOrNull(users, issue.closed_by_id, base),
    labels: [],
    milestone: null,
    assignees,
    assignee: assignees[0] ?? null,
    author: userOrNull(users, issue.author_id, base),
    type: issue.issue_type.toUpperCase() as IssueEntity['type'],
    issue_type: issue.issue_type as IssueEntity['issue_type'],
    user_notes_count: notesCount,
    upvotes: 0,
    downvotes: 0,
    due_date: issue.due_date,
    confidential: issue.confidential === 1,
    discussion_locked: null,
    web_url: `${base}/${project.full_path}/-/issues/${issue.iid}`,
    references: { short: `#${issue.iid}`, relative: `#${issue.iid}`, full: `${project.full_path}#${issue.iid}` },
  };
}

export function mapNote(note: NoteRow, base: string, users: Users, noteableIid: number | null): NoteEntity {
  return {
    id: note.id,
    type: null,
    body: note.body,
    attachment: null,
    author: userOrNull(users, note.author_id, base),
    created_at: toIso(note.created_at),
    updated_at: toIso(note.updated_at),
    system: note.system === 1,
    noteable_id: note.noteable_id,
    noteable_type: note.noteable_type,
    project_id: note.project_id,
    noteable_iid: noteableIid,
    resolvable: false,
    confidential: false,
    internal: false,
  };
}

export function mapSnippet(snippet: SnippetRow, base: string, users: Users, project: ProjectRow | null): SnippetEntity {
  const webUrl = project ? `${base}/${project.full_path}/-/snippets/${snippet.id}` : `${base}/-/snippets/${snippet.id}`;
  return {
    id: snippet.id,
    title: snippet.title,
    description: snippet.description,
    visibility: snippet.visibility as VisibilityValue,
    author: userOrNull(users, snippet.author_id, base),
    created_at: toIso(snippet.created_at),
    updated_at: toIso(snippet.updated_at),
    project_id: snippet.project_id,
    web_url: webUrl,
    raw_url: `${webUrl}/raw`,
    file_name: snippet.file_name,
    files: [{ path: snippet.file_name, raw_url: `${webUrl}/raw/main/${snippet.file_name}` }],
    http_url_to_repo: project ? `${base}/${project.full_path}/snippets/${snippet.id}.git` : `${base}/snippets/${snippet.id}.git`,
    repository_storage: snippet.repository_storage,
  };
}
