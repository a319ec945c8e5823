import { sql } from 'kysely';
import { bool, references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/** Alert integrations, alerts, per-project alert settings and the alert email outbox. */
export const alertsMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('alert_integrations'), dialect)
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('type', text, (c) => c.notNull())
      .addColumn('active', bool, (c) => c.notNull().defaultTo(1))
      .addColumn('endpoint_identifier', text, (c) => c.notNull())
      .addColumn('token_digest', text, (c) => c.notNull())
      .addColumn('payload_example', text)
      .addColumn('payload_attribute_mappings', text)
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .addUniqueConstraint('alert_integrations_endpoint', ['project_id', 'endpoint_identifier'])
      .execute();

    await withId(db.schema.createTable('alerts'), dialect)
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('iid', 'integer', (c) => c.notNull())
      .addColumn('integration_id', 'bigint', references('alert_integrations', 'set null'))
      .addColumn('title', text, (c) => c.notNull())
      .addColumn('description', text)
      .addColumn('service', text)
      .addColumn('monitoring_tool', text)
      .addColumn('hosts', text, (c) => c.notNull().defaultTo('[]'))
      .addColumn('severity', text, (c) => c.notNull().defaultTo('critical'))
      .addColumn('status', text, (c) => c.notNull().defaultTo('triggered'))
      .addColumn('started_at', ts, (c) => c.notNull())
      .addColumn('ended_at', ts)
      .addColumn('events', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('fingerprint', text)
      .addColumn('environment_name', text)
      .addColumn('runbook', text)
      .addColumn('full_query', text)
      .addColumn('y_label', text)
      .addColumn('incident_markdown', text)
      .addColumn('payload', text, (c) => c.notNull().defaultTo('{}'))
      .addColumn('custom_fields', text, (c) => c.notNull().defaultTo('{}'))
      .addColumn('issue_id', 'bigint', references('issues', 'set null'))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .addUniqueConstraint('alerts_project_iid', ['project_id', 'iid'])
      .execute();
    // One unresolved alert per fingerprint: concurrent identical alerts meet here and the
    // loser's upsert turns into an event-count increment (ON CONFLICT with this predicate).
    await db.schema
      .createIndex('alerts_open_fingerprint')
      .on('alerts')
      .columns(['project_id', 'fingerprint'])
      .unique()
      .where(sql.raw<boolean>(`status <> 'resolved'`))
      .execute();
    await db.schema.createIndex('alerts_project_status').on('alerts').columns(['project_id', 'status', 'id']).execute();

    await db.schema
      .createTable('alert_settings')
      .addColumn('project_id', 'bigint', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
      .addColumn('create_issue', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('auto_close_incident', bool, (c) => c.notNull().defaultTo(1))
      .addColumn('send_email', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('alert_email_outbox'), dialect)
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('alert_id', 'bigint', references('alerts', 'set null'))
      .addColumn('user_id', 'bigint', references('users', 'set null'))
      .addColumn('recipient', text, (c) => c.notNull())
      .addColumn('subject', text, (c) => c.notNull())
      .addColumn('body', text, (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('sent_at', ts)
      .execute();
    await db.schema.createIndex('alert_email_outbox_unsent').on('alert_email_outbox').columns(['sent_at', 'id']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('alert_email_outbox').execute();
    await db.schema.dropTable('alert_settings').execute();
    await db.schema.dropTable('alerts').execute();
    await db.schema.dropTable('alert_integrations').execute();
  },
});
