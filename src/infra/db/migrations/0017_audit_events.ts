import { text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * The audit trail (src/modules/audit): one row per recorded action, written in the transaction
 * of the action. No foreign keys: an event outlives the user, group or project it names, so
 * the author's and entity's names are copied in. The administrator's list pages newest first
 * over a time range (audit_events_created); the group and project lists and the `entity_type`
 * / `entity_id` filters read one entity's events newest first (audit_events_entity).
 */
export const auditEventsMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('audit_events'), dialect)
      .addColumn('author_id', 'bigint', (c) => c.notNull())
      .addColumn('author_name', text, (c) => c.notNull())
      .addColumn('entity_type', text, (c) => c.notNull())
      .addColumn('entity_id', 'bigint', (c) => c.notNull())
      .addColumn('entity_path', text)
      .addColumn('target_type', text)
      .addColumn('target_id', 'bigint')
      .addColumn('target_details', text)
      .addColumn('event_name', text, (c) => c.notNull())
      .addColumn('details', text, (c) => c.notNull())
      .addColumn('ip_address', text)
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('audit_events_created').on('audit_events').columns(['created_at', 'id']).execute();
    await db.schema
      .createIndex('audit_events_entity')
      .on('audit_events')
      .columns(['entity_type', 'entity_id', 'created_at', 'id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('audit_events').execute();
  },
});
