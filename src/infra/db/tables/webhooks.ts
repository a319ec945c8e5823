import type { Generated } from 'kysely';
import type { Flag, Millis } from './core.js';

/** How `push_events_branch_filter` is read (the established product's three strategies). */
export const BRANCH_FILTER_STRATEGIES = ['wildcard', 'regex', 'all_branches'] as const;
export type BranchFilterStrategy = (typeof BRANCH_FILTER_STRATEGIES)[number];

/** A project's or a group's webhook (migration 0014): exactly one of project_id and group_id is set. */
export interface WebHooksTable {
  id: Generated<number>;
  project_id: number | null;
  group_id: number | null;
  /** Sent as X-Gitlab-Webhook-UUID: names the hook to its receiver. */
  uuid: string;
  url: string;
  name: Generated<string>;
  description: Generated<string>;
  /** The secret token sealed with SECRET_KEY_BASE (it is sent, so it cannot be a digest); never answered. */
  token_sealed: string | null;
  push_events: Flag;
  tag_push_events: Flag;
  issues_events: Flag;
  confidential_issues_events: Flag;
  note_events: Flag;
  confidential_note_events: Flag;
  enable_ssl_verification: Flag;
  push_events_branch_filter: string | null;
  branch_filter_strategy: BranchFilterStrategy;
  /** Failed deliveries in a row; a success sets it back to 0. */
  recent_failures: Generated<number>;
  /** How many times the hook was disabled for a while in a row (the backoff's exponent). */
  backoff_count: Generated<number>;
  disabled_until: Millis | null;
  permanently_disabled: Generated<Flag>;
  created_at: Millis;
  updated_at: Millis;
}

/** One delivery attempt of a hook, as the settings page shows it; only the newest are kept. */
export interface WebHookLogsTable {
  id: Generated<number>;
  web_hook_id: number;
  /** push_hooks, tag_push_hooks, issue_hooks, note_hooks… (the established product's trigger names). */
  trigger: string;
  url: string;
  /** JSON object text. */
  request_headers: string;
  request_data: string;
  /** The HTTP status as text, or `internal error` when no answer came. */
  response_status: string;
  response_headers: string;
  response_body: string;
  execution_duration_ms: number;
  internal_error_message: string | null;
  created_at: Millis;
}

export interface WebhooksTables {
  web_hooks: WebHooksTable;
  web_hook_logs: WebHookLogsTable;
}
