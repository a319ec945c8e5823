import type { AnyDb, MigrationFactory } from './helpers.js';

/**
 * Project lists are ordered by last activity (the dashboard, "Your projects", group pages): without
 * an index every visible project is read and sorted for each page, which over 1,000 projects is
 * most of the dashboard's database time; in index order the first page stops after its rows
 * (docs/perf-lab.md "Pages").
 */
export const projectsActivityIndexMigration: MigrationFactory = () => ({
  async up(db: AnyDb) {
    await db.schema.createIndex('projects_last_activity').on('projects').columns(['last_activity_at', 'id']).execute();
  },
  async down(db: AnyDb) {
    await db.schema.dropIndex('projects_last_activity').execute();
  },
});
