import type { Generated } from 'kysely';
import type { Flag, Millis } from './core.js';

/** The values of `alerts.status`, in the order of reference A7 (sorting by status, the page's tabs). */
export const ALERT_STATUSES = ['triggered', 'acknowledged', 'resolved', 'ignored'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/** The values of `alert_integrations.type`. */
export const INTEGRATION_TYPES = ['http', 'prometheus'] as const;

/** An alert endpoint of a project: generic HTTP or Prometheus (migration 0004). */
export interface AlertIntegrationsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  type: (typeof INTEGRATION_TYPES)[number];
  active: Flag;
  /** Fixed once created; part of the HTTP endpoint's URL. */
  endpoint_identifier: string;
  /** SHA-256 of the `bsa_` key; the key itself is shown only on create and reset. */
  token_digest: string;
  /** JSON text of the sample payload, or null. */
  payload_example: string | null;
  /** JSON text: array of `{field_name, path, type, label}`, or null. */
  payload_attribute_mappings: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface AlertsTable {
  id: Generated<number>;
  project_id: number;
  iid: number;
  integration_id: number | null;
  title: string;
  description: string | null;
  service: string | null;
  monitoring_tool: string | null;
  /** JSON text: array of strings. */
  hosts: string;
  severity: string;
  status: AlertStatus;
  started_at: Millis;
  ended_at: Millis | null;
  events: number;
  /** SHA-1 hex; unique per project among alerts that are not resolved. */
  fingerprint: string | null;
  environment_name: string | null;
  runbook: string | null;
  full_query: string | null;
  y_label: string | null;
  incident_markdown: string | null;
  /** JSON text: the payload as received. */
  payload: string;
  /** JSON text: fields kept beyond the known ones. */
  custom_fields: string;
  issue_id: number | null;
  created_at: Millis;
  updated_at: Millis;
  /** The project member looking after the alert (migration 0015). */
  assignee_id: number | null;
}

/** The values of `alert_activity.kind`. */
export const ALERT_ACTIVITY_KINDS = ['status', 'assignee', 'incident'] as const;

/** What happened to an alert besides its events, newest last (migration 0015). */
export interface AlertActivityTable {
  id: Generated<number>;
  project_id: number;
  alert_id: number;
  kind: (typeof ALERT_ACTIVITY_KINDS)[number];
  /** The new status, the assignee's username (null: unassigned), the incident's iid. */
  detail: string | null;
  /** Null: the monitoring tool (through its integration) or a deleted user. */
  author_id: number | null;
  created_at: Millis;
}

export interface AlertSettingsTable {
  project_id: number;
  create_issue: Flag;
  auto_close_incident: Flag;
  send_email: Flag;
  updated_at: Millis;
}

export interface AlertsTables {
  alert_integrations: AlertIntegrationsTable;
  alerts: AlertsTable;
  alert_activity: AlertActivityTable;
  alert_settings: AlertSettingsTable;
}
