import type { ColumnType, Generated } from 'kysely';
import type { Flag, Millis } from './core.js';

export interface ErrorTrackingSettingsTable {
  project_id: number;
  active: Flag;
  integrated: Flag;
  /** Whether new and regressed errors mail the project's maintainers (migration 0019; on by default). */
  email_notifications: Generated<Flag>;
  created_at: Millis;
  updated_at: Millis;
}

export interface ErrorTrackingClientKeysTable {
  id: Generated<number>;
  project_id: number;
  public_key: string;
  active: Generated<Flag>;
  created_at: Millis;
  updated_at: Millis;
}

export const ERROR_STATUSES = ['unresolved', 'resolved', 'ignored'] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

export interface ErrorTrackingErrorsTable {
  id: Generated<number>;
  project_id: number;
  fingerprint: string;
  /** The fingerprint's first 64 bits, the unique key of an error in its project (migration 0011). */
  fingerprint_key: ColumnType<number | bigint, bigint, bigint>;
  title: string;
  name: string;
  description: string;
  culprit: string;
  platform: string;
  status: Generated<ErrorStatus>;
  events_count: number;
  first_seen_at: Millis;
  last_seen_at: Millis;
  issue_iid: number | null;
  /** When an event last reopened the error after it was resolved (migration 0019). */
  regressed_at: Generated<Millis | null>;
  created_at: Millis;
  updated_at: Millis;
}

export interface ErrorTrackingErrorEventsTable {
  id: Generated<number>;
  project_id: number;
  error_id: number;
  event_id: string;
  occurred_at: Millis;
  received_at: Millis;
  level: string;
  environment: string | null;
  release: string | null;
  user_identifier: string | null;
  description: string;
  payload: string;
}

export interface ErrorTrackingSessionCountsTable {
  project_id: number;
  release: string;
  environment: string;
  bucket_at: Millis;
  started: Generated<number>;
  exited: Generated<number>;
  errored: Generated<number>;
  crashed: Generated<number>;
  abnormal: Generated<number>;
}

export interface ErrorTrackingSchedulesTable {
  name: string;
  updated_at: Millis;
}

export interface ErrorTrackingTables {
  error_tracking_settings: ErrorTrackingSettingsTable;
  error_tracking_client_keys: ErrorTrackingClientKeysTable;
  error_tracking_errors: ErrorTrackingErrorsTable;
  error_tracking_error_events: ErrorTrackingErrorEventsTable;
  error_tracking_session_counts: ErrorTrackingSessionCountsTable;
  error_tracking_schedules: ErrorTrackingSchedulesTable;
}
