import type { Generated } from 'kysely';

/** 0/1: booleans are integers on both dialects (see migrations/helpers.ts). */
export type Flag = number;
/** Epoch milliseconds. */
export type Millis = number;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  username_lower: string;
  name: string;
  email: string;
  email_lower: string;
  password_hash: string | null;
  is_admin: Generated<Flag>;
  state: Generated<string>;
  bot: Generated<Flag>;
  private_profile: Generated<Flag>;
  bio: Generated<string>;
  public_email: string | null;
  confirmed_at: Millis | null;
  current_sign_in_at: Millis | null;
  last_sign_in_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface NamespacesTable {
  id: Generated<number>;
  kind: 'user' | 'group';
  name: string;
  path: string;
  full_path: string;
  full_path_lower: string;
  parent_id: number | null;
  owner_id: number | null;
  visibility: Generated<string>;
  description: Generated<string>;
  pending_delete: Generated<Flag>;
  created_at: Millis;
  updated_at: Millis;
}

export interface ProjectsTable {
  id: Generated<number>;
  namespace_id: number;
  name: string;
  path: string;
  full_path: string;
  full_path_lower: string;
  description: Generated<string>;
  visibility: Generated<string>;
  repository_storage: string;
  repository_read_only: Generated<Flag>;
  default_branch: Generated<string>;
  creator_id: number | null;
  pending_delete: Generated<Flag>;
  last_activity_at: Millis;
  created_at: Millis;
  updated_at: Millis;
}

export interface MembersTable {
  id: Generated<number>;
  source_kind: 'namespace' | 'project';
  source_id: number;
  user_id: number;
  access_level: number;
  created_by_id: number | null;
  expires_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface RedirectRoutesTable {
  id: Generated<number>;
  path_lower: string;
  source_kind: 'namespace' | 'project';
  source_id: number;
  created_at: Millis;
}

export interface SnippetsTable {
  id: Generated<number>;
  project_id: number | null;
  author_id: number;
  title: string;
  description: Generated<string>;
  file_name: string;
  content: string;
  visibility: Generated<string>;
  repository_storage: string;
  repository_read_only: Generated<Flag>;
  created_at: Millis;
  updated_at: Millis;
}

export interface InternalIdsTable {
  project_id: number;
  usage: string;
  last_value: number;
}

export interface IssuesTable {
  id: Generated<number>;
  project_id: number;
  iid: number;
  title: string;
  description: Generated<string>;
  state: Generated<string>;
  issue_type: Generated<string>;
  confidential: Generated<Flag>;
  author_id: number | null;
  closed_by_id: number | null;
  closed_at: Millis | null;
  created_at: Millis;
  updated_at: Millis;
  /** `YYYY-MM-DD` (migration 0018). */
  due_date: string | null;
}

/** An issue's assignees (migration 0018). */
export interface IssueAssigneesTable {
  issue_id: number;
  user_id: number;
}

export interface NotesTable {
  id: Generated<number>;
  project_id: number | null;
  noteable_type: string;
  noteable_id: number;
  author_id: number | null;
  body: string;
  system: Generated<Flag>;
  created_at: Millis;
  updated_at: Millis;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_digest: string;
  kind: Generated<'personal' | 'impersonation' | 'project' | 'group'>;
  scopes: string;
  resource_kind: string | null;
  resource_id: number | null;
  access_level: number | null;
  created_by_id: number | null;
  previous_token_id: number | null;
  expires_at: Millis | null;
  revoked: Generated<Flag>;
  last_used_at: Millis | null;
  created_at: Millis;
}

export interface BackgroundJobsTable {
  id: Generated<number>;
  kind: string;
  payload: string;
  state: Generated<'queued' | 'running' | 'done' | 'failed'>;
  run_at: Millis;
  locked_by: string | null;
  locked_until: Millis | null;
  attempts: Generated<number>;
  last_error: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface InstanceSettingsTable {
  key: string;
  value: string;
}

export interface CoreTables {
  users: UsersTable;
  namespaces: NamespacesTable;
  projects: ProjectsTable;
  members: MembersTable;
  redirect_routes: RedirectRoutesTable;
  snippets: SnippetsTable;
  internal_ids: InternalIdsTable;
  issues: IssuesTable;
  issue_assignees: IssueAssigneesTable;
  notes: NotesTable;
  personal_access_tokens: PersonalAccessTokensTable;
  background_jobs: BackgroundJobsTable;
  instance_settings: InstanceSettingsTable;
}
