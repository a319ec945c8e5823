import type { Generated } from 'kysely';
import type { Millis } from './core.js';

/**
 * One transaction's audit events about one entity (migration 0021, src/modules/audit): up to 100,
 * as JSON text (src/modules/audit/audit-set.encoding.ts). Event `n` of set `id` is event
 * `id * 100 + n` of the API.
 */
export interface AuditEventSetsTable {
  id: Generated<number>;
  entity_type: string;
  entity_id: number;
  /** The earliest and latest `created_at` among the set's events. */
  first_at: Millis;
  last_at: Millis;
  event_count: number;
  events: string;
}

/** The `audit_events` view: every set's events, one row each, for operators' SQL and tests (read only). */
export interface AuditEventsView {
  id: number;
  author_id: number;
  author_name: string;
  entity_type: string;
  entity_id: number;
  entity_path: string | null;
  target_type: string | null;
  target_id: number | null;
  target_details: string | null;
  event_name: string;
  /** The event's facts as JSON text. */
  details: string;
  ip_address: string | null;
  created_at: Millis;
}

export interface AuditTables {
  audit_event_sets: AuditEventSetsTable;
  audit_events: AuditEventsView;
}
