import { Repository } from '../../infra/db/index.js';
import type { Selectable } from 'kysely';
import type { AuditEventsTable } from '../../infra/db/tables/audit.js';
import type { AuditEntry } from '../../infra/audit.js';

export type AuditEventRow = Selectable<AuditEventsTable>;

export interface AuditFilter {
  createdAfter?: number;
  createdBefore?: number;
  entityType?: string;
  entityId?: number;
}

/** The `audit_events` table: written by the bus subscriber, read by the three lists, trimmed by retention. */
export class AuditRepository extends Repository {
  async insert(entry: AuditEntry): Promise<void> {
    await this.db
      .insertInto('audit_events')
      .values({
        author_id: entry.authorId,
        author_name: entry.authorName,
        entity_type: entry.entityType,
        entity_id: entry.entityId,
        entity_path: entry.entityPath,
        target_type: entry.targetType ?? null,
        target_id: entry.targetId ?? null,
        target_details: entry.targetDetails ?? null,
        event_name: entry.eventName,
        details: JSON.stringify(entry.details ?? {}),
        ip_address: entry.ipAddress ?? null,
        created_at: entry.at,
      })
      .execute();
  }

  private filtered(filter: AuditFilter) {
    let query = this.db.selectFrom('audit_events');
    if (filter.entityType !== undefined) query = query.where('entity_type', '=', filter.entityType);
    if (filter.entityId !== undefined) query = query.where('entity_id', '=', filter.entityId);
    if (filter.createdAfter !== undefined) query = query.where('created_at', '>=', filter.createdAfter);
    if (filter.createdBefore !== undefined) query = query.where('created_at', '<=', filter.createdBefore);
    return query;
  }

  /** A page, newest first, and how many match. */
  async list(filter: AuditFilter, limit: number, offset: number): Promise<{ rows: AuditEventRow[]; total: number }> {
    const rows = await this.filtered(filter)
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const counted = await this.filtered(filter)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return { rows, total: Number(counted.n) };
  }

  findById(id: number): Promise<AuditEventRow | undefined> {
    return this.db.selectFrom('audit_events').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Deletes up to `batch` events older than `cutoff`; how many went. */
  async deleteOlderThan(cutoff: number, batch: number): Promise<number> {
    const deleted = await this.db
      .deleteFrom('audit_events')
      .where('id', 'in', (eb) =>
        eb.selectFrom('audit_events').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(batch),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}
