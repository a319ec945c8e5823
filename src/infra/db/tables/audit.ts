import type { Generated } from 'kysely';
import type { Millis } from './core.js';

/** One recorded action (migration 0017, src/modules/audit). `details` is JSON text. */
export interface AuditEventsTable {
  id: Generated<number>;
  author_id: number;
  author_name: string;
  entity_type: string;
  entity_id: number;
  entity_path: string | null;
  target_type: string | null;
  target_id: number | null;
  target_details: string | null;
  event_name: string;
  details: string;
  ip_address: string | null;
  created_at: Millis;
}

/** One shared commit's audit events on their way to `audit_events` (migration 0020): deflated JSON, base64. */
export interface AuditEventQueueTable {
  id: Generated<number>;
  events: string;
}

export interface AuditTables {
  audit_events: AuditEventsTable;
  audit_event_queue: AuditEventQueueTable;
}
