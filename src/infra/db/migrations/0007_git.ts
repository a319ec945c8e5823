import { sql } from 'kysely';
import { bool, text, ts, withId, type AnyDb, type MigrationFactory } from './helpers.js';

/** Repository storage moves (projects, snippets, groups), group wiki repositories, pushes in flight. */
export const gitMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await withId(db.schema.createTable('repository_storage_moves'), dialect)
      .addColumn('container_kind', text, (c) => c.notNull())
      .addColumn('container_id', 'bigint', (c) => c.notNull())
      .addColumn('state', text, (c) => c.notNull())
      .addColumn('source_storage_name', text, (c) => c.notNull())
      .addColumn('destination_storage_name', text, (c) => c.notNull())
      .addColumn('error_message', text)
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('repository_storage_moves_container')
      .on('repository_storage_moves')
      .columns(['container_kind', 'container_id', 'id'])
      .execute();
    // At most one move in progress per container: the guard against scheduling twice at once.
    await db.schema
      .createIndex('repository_storage_moves_active')
      .on('repository_storage_moves')
      .columns(['container_kind', 'container_id'])
      .unique()
      .where(sql<boolean>`state in ('scheduled', 'started', 'replicated')`)
      .execute();

    await db.schema
      .createTable('group_wiki_repositories')
      .addColumn('group_id', 'bigint', (c) => c.primaryKey())
      .addColumn('repository_storage', text, (c) => c.notNull())
      .addColumn('repository_read_only', bool, (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull())
      .execute();
    await db.schema.createIndex('group_wiki_repositories_storage').on('group_wiki_repositories').column('repository_storage').execute();

    // Pushes being received; a move waits until none is left for its container.
    await withId(db.schema.createTable('git_active_pushes'), dialect)
      .addColumn('container_kind', text, (c) => c.notNull())
      .addColumn('container_id', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', ts, (c) => c.notNull())
      .addColumn('created_at', ts, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('git_active_pushes_container')
      .on('git_active_pushes')
      .columns(['container_kind', 'container_id'])
      .execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('git_active_pushes').execute();
    await db.schema.dropTable('group_wiki_repositories').execute();
    await db.schema.dropTable('repository_storage_moves').execute();
  },
});
