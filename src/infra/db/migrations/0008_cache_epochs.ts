import type { AnyDb, MigrationFactory } from './helpers.js';

/** Cache epochs: one counter per family of cached lookups (infra/db/epochs.ts). */
export const cacheEpochsMigration: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('cache_epochs')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.insertInto('cache_epochs').values({ name: 'credentials', value: 0 }).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropTable('cache_epochs').execute();
  },
});
