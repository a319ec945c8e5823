import type { Static } from '@sinclair/typebox';
import type { AuditEventRow } from './audit.repository.js';
import type { AuditEvent } from './audit.schemas.js';

/** A row as the established product's audit event: recorded facts, then who, what and where, in `details`. */
export function mapAuditEvent(row: AuditEventRow): Static<typeof AuditEvent> {
  const facts = JSON.parse(row.details) as Record<string, string | number | boolean | null | string[]>;
  return {
    id: row.id,
    author_id: row.author_id,
    entity_id: row.entity_id,
    entity_type: row.entity_type,
    event_name: row.event_name,
    details: {
      ...facts,
      author_name: row.author_name,
      target_id: row.target_id,
      target_type: row.target_type,
      target_details: row.target_details,
      ip_address: row.ip_address,
      entity_path: row.entity_path,
    },
    created_at: new Date(row.created_at).toISOString(),
  };
}
