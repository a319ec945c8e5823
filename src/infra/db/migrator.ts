import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Database, Dialect } from './database.js';
import { migrations } from './migrations/index.js';

/** Migrations are listed in code so the compiled build carries them without file scanning. */
class ListedMigrations implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}

  getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, build] of Object.entries(migrations)) out[name] = build(this.dialect);
    return Promise.resolve(out);
  }
}

/**
 * On PostgreSQL, migrations of every schema in the database take turns under one advisory
 * lock: several processes starting at once migrate one after the other, and Kysely's check
 * for its bookkeeping tables (which lists the tables of all schemas) never meets a schema
 * being dropped. Test helpers drop their schemas under the same lock.
 */
export const MIGRATION_LOCK_KEY = 7_420_001;

export function migrateToLatest(db: Database, dialect: Dialect): Promise<string[]> {
  return migrate(db, dialect, null);
}

/** Up to (and with) the migration named: for tests of a migration on data of the schema before it. */
export function migrateTo(db: Database, dialect: Dialect, name: string): Promise<string[]> {
  return migrate(db, dialect, name);
}

async function migrate(db: Database, dialect: Dialect, target: string | null): Promise<string[]> {
  if (dialect !== 'postgres') return runMigrations(db, dialect, target);
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(connection);
    try {
      return await runMigrations(db, dialect, target);
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(connection);
    }
  });
}

async function migratorFor(db: Database, dialect: Dialect): Promise<Migrator> {
  // Kysely looks for its bookkeeping tables in every schema unless told which; with several
  // schemas in one database (tests, tenants) it must be the connection's own.
  const schema =
    dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  return new Migrator({
    db,
    provider: new ListedMigrations(dialect),
    // Numbers are reserved per area, so an older-numbered migration may arrive after a newer one.
    allowUnorderedMigrations: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

export interface MigrationState {
  readonly name: string;
  /** When it was applied; `null` while pending. */
  readonly executedAt: Date | null;
}

/** Every migration by name, applied or pending (`basalt migrate --status`); reads only, creates nothing. */
export async function migrationStatus(db: Database, dialect: Dialect): Promise<MigrationState[]> {
  const read = async (on: Database) =>
    (await (await migratorFor(on, dialect)).getMigrations()).map((info) => ({ name: info.name, executedAt: info.executedAt ?? null }));
  if (dialect !== 'postgres') return read(db);
  // Kysely's check for its tables lists those of every schema: under the lock's shared form, so
  // no schema is dropped meanwhile (drops take it whole) while status reads go on side by side.
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock_shared(${MIGRATION_LOCK_KEY})`.execute(connection);
    try {
      return await read(connection);
    } finally {
      await sql`select pg_advisory_unlock_shared(${MIGRATION_LOCK_KEY})`.execute(connection);
    }
  });
}

async function runMigrations(db: Database, dialect: Dialect, target: string | null): Promise<string[]> {
  const migrator = await migratorFor(db, dialect);
  const { error, results } = await (target === null ? migrator.migrateToLatest() : migrator.migrateTo(target));
  if (error) throw error instanceof Error ? error : new Error(JSON.stringify(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
