import type { Generated } from 'kysely';
import type { PushAction, RefType } from '../../bus.js';
import type { Flag, Millis } from './core.js';

/** One nullable 0/1 per notification event (SPEC "Notification setting"); NULL = default. */
export interface NotificationEventColumns {
  new_release: Flag | null;
  new_note: Flag | null;
  new_issue: Flag | null;
  reopen_issue: Flag | null;
  close_issue: Flag | null;
  reassign_issue: Flag | null;
  issue_due: Flag | null;
  new_merge_request: Flag | null;
  push_to_merge_request: Flag | null;
  reopen_merge_request: Flag | null;
  close_merge_request: Flag | null;
  reassign_merge_request: Flag | null;
  change_reviewer_merge_request: Flag | null;
  merge_merge_request: Flag | null;
  failed_pipeline: Flag | null;
  fixed_pipeline: Flag | null;
  success_pipeline: Flag | null;
  moved_project: Flag | null;
  merge_when_pipeline_succeeds: Flag | null;
  new_epic: Flag | null;
  approver: Flag | null;
}

export interface NotificationSettingsTable extends NotificationEventColumns {
  id: Generated<number>;
  user_id: number;
  /** `global` (source_id 0), `namespace` (a group) or `project`. */
  source_kind: 'global' | 'namespace' | 'project';
  source_id: number;
  level: string;
  notification_email: string | null;
  created_at: Millis;
  updated_at: Millis;
}

/** Secondary emails of a user; verified once confirmed_at is set. */
export interface UserEmailsTable {
  id: Generated<number>;
  user_id: number;
  email: string;
  email_lower: string;
  confirmed_at: Millis | null;
  created_at: Millis;
}

export interface EventsTable {
  id: Generated<number>;
  project_id: number | null;
  author_id: number;
  action: number;
  target_type: string | null;
  target_id: number | null;
  imported_from: Generated<string>;
  created_at: Millis;
}

export interface PushEventPayloadsTable {
  event_id: number;
  commit_count: number;
  action: PushAction;
  ref_type: RefType;
  commit_from: string | null;
  commit_to: string | null;
  ref: string | null;
  commit_title: string | null;
  ref_count: number | null;
}

export interface NotificationsEventsTables {
  notification_settings: NotificationSettingsTable;
  user_emails: UserEmailsTable;
  events: EventsTable;
  push_event_payloads: PushEventPayloadsTable;
}
