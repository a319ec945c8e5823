import { bool, references, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/** Accounts, namespaces, projects, members, snippets, issues, notes, tokens, jobs. */
export const coreMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('users'), dialect)
      .addColumn('username', text, (c) => c.notNull())
      .addColumn('username_lower', text, (c) => c.notNull().unique())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('email', text, (c) => c.notNull())
      .addColumn('email_lower', text, (c) => c.notNull().unique())
      .addColumn('password_hash', text)
      .addColumn('is_admin', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('state', text, (c) => c.notNull().defaultTo('active'))
      .addColumn('bot', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('private_profile', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('bio', text, (c) => c.notNull().defaultTo(''))
      .addColumn('public_email', text)
      .addColumn('confirmed_at', ts)
      .addColumn('current_sign_in_at', ts)
      .addColumn('last_sign_in_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('namespaces'), dialect)
      .addColumn('kind', text, (c) => c.notNull())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('path', text, (c) => c.notNull())
      .addColumn('full_path', text, (c) => c.notNull())
      .addColumn('full_path_lower', text, (c) => c.notNull().unique())
      .addColumn('parent_id', 'bigint', references('namespaces', 'restrict'))
      .addColumn('owner_id', 'bigint', references('users'))
      .addColumn('visibility', text, (c) => c.notNull().defaultTo('private'))
      .addColumn('description', text, (c) => c.notNull().defaultTo(''))
      .addColumn('pending_delete', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('namespaces_parent').on('namespaces').column('parent_id').execute();
    await db.schema.createIndex('namespaces_owner').on('namespaces').column('owner_id').execute();

    await withId(db.schema.createTable('projects'), dialect)
      .addColumn('namespace_id', 'bigint', (c) => c.notNull().references('namespaces.id').onDelete('restrict'))
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('path', text, (c) => c.notNull())
      .addColumn('full_path', text, (c) => c.notNull())
      .addColumn('full_path_lower', text, (c) => c.notNull().unique())
      .addColumn('description', text, (c) => c.notNull().defaultTo(''))
      .addColumn('visibility', text, (c) => c.notNull().defaultTo('private'))
      .addColumn('repository_storage', text, (c) => c.notNull())
      .addColumn('repository_read_only', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('default_branch', text, (c) => c.notNull().defaultTo('main'))
      .addColumn('creator_id', 'bigint', references('users', 'set null'))
      .addColumn('pending_delete', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('last_activity_at', ts, (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('projects_namespace').on('projects').column('namespace_id').execute();
    await db.schema.createIndex('projects_storage').on('projects').columns(['repository_storage', 'id']).execute();

    await withId(db.schema.createTable('members'), dialect)
      .addColumn('source_kind', text, (c) => c.notNull())
      .addColumn('source_id', 'bigint', (c) => c.notNull())
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('access_level', 'integer', (c) => c.notNull())
      .addColumn('created_by_id', 'bigint', references('users', 'set null'))
      .addColumn('expires_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .addUniqueConstraint('members_source_user', ['source_kind', 'source_id', 'user_id'])
      .execute();
    await db.schema.createIndex('members_user').on('members').column('user_id').execute();

    await withId(db.schema.createTable('redirect_routes'), dialect)
      .addColumn('path_lower', text, (c) => c.notNull().unique())
      .addColumn('source_kind', text, (c) => c.notNull())
      .addColumn('source_id', 'bigint', (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();

    await withId(db.schema.createTable('snippets'), dialect)
      .addColumn('project_id', 'bigint', references('projects'))
      .addColumn('author_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('title', text, (c) => c.notNull())
      .addColumn('description', text, (c) => c.notNull().defaultTo(''))
      .addColumn('file_name', text, (c) => c.notNull())
      .addColumn('content', text, (c) => c.notNull())
      .addColumn('visibility', text, (c) => c.notNull().defaultTo('private'))
      .addColumn('repository_storage', text, (c) => c.notNull())
      .addColumn('repository_read_only', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('snippets_project').on('snippets').column('project_id').execute();
    await db.schema.createIndex('snippets_author').on('snippets').column('author_id').execute();

    await db.schema
      .createTable('internal_ids')
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('usage', text, (c) => c.notNull())
      .addColumn('last_value', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('internal_ids_pk', ['project_id', 'usage'])
      .execute();

    await withId(db.schema.createTable('issues'), dialect)
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('iid', 'bigint', (c) => c.notNull())
      .addColumn('title', text, (c) => c.notNull())
      .addColumn('description', text, (c) => c.notNull().defaultTo(''))
      .addColumn('state', text, (c) => c.notNull().defaultTo('opened'))
      .addColumn('issue_type', text, (c) => c.notNull().defaultTo('issue'))
      .addColumn('confidential', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('author_id', 'bigint', references('users', 'set null'))
      .addColumn('closed_by_id', 'bigint', references('users', 'set null'))
      .addColumn('closed_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .addUniqueConstraint('issues_project_iid', ['project_id', 'iid'])
      .execute();

    await withId(db.schema.createTable('notes'), dialect)
      .addColumn('project_id', 'bigint', references('projects'))
      .addColumn('noteable_type', text, (c) => c.notNull())
      .addColumn('noteable_id', 'bigint', (c) => c.notNull())
      .addColumn('author_id', 'bigint', references('users', 'set null'))
      .addColumn('body', text, (c) => c.notNull())
      .addColumn('system', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('notes_noteable').on('notes').columns(['noteable_type', 'noteable_id']).execute();

    await withId(db.schema.createTable('personal_access_tokens'), dialect)
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('token_digest', text, (c) => c.notNull().unique())
      .addColumn('kind', text, (c) => c.notNull().defaultTo('personal'))
      .addColumn('scopes', text, (c) => c.notNull())
      .addColumn('resource_kind', text)
      .addColumn('resource_id', 'bigint')
      .addColumn('access_level', 'integer')
      .addColumn('created_by_id', 'bigint', references('users', 'set null'))
      .addColumn('previous_token_id', 'bigint')
      .addColumn('expires_at', ts)
      .addColumn('revoked', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('last_used_at', ts)
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('pat_user').on('personal_access_tokens').column('user_id').execute();

    await withId(db.schema.createTable('background_jobs'), dialect)
      .addColumn('kind', text, (c) => c.notNull())
      .addColumn('payload', text, (c) => c.notNull())
      .addColumn('state', text, (c) => c.notNull().defaultTo('queued'))
      .addColumn('run_at', ts, (c) => c.notNull())
      .addColumn('locked_by', text)
      .addColumn('locked_until', ts)
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', text)
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('background_jobs_due').on('background_jobs').columns(['state', 'run_at']).execute();

    await db.schema
      .createTable('instance_settings')
      .addColumn('key', text, (c) => c.primaryKey())
      .addColumn('value', text, (c) => c.notNull())
      .execute();
  },
});
