import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/infra/db/index.js';
import { MIGRATION_LOCK_KEY, migrateTo } from '../../src/infra/db/migrator.js';

export type TestDialect = 'sqlite' | 'postgres';

/** Which database this run of the suite uses (scripts/test.mjs sets it). */
export function testDialect(): TestDialect {
  return process.env.BASALT_TEST_DB === 'postgres' && process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';
}

/**
 * A new test schema's name: when it was made, by which process on which host, so that a run's
 * start (scripts/test.mjs, which parses this form) drops only the schemas of runs that are gone
 * and leaves those of runs going on next to it.
 */
export function testSchemaName(): string {
  const host = createHash('sha1').update(os.hostname()).digest('hex').slice(0, 6);
  return `t_${Date.now().toString(36)}_${process.pid.toString(36)}_${host}_${randomBytes(4).toString('hex')}`;
}

export async function withSchemaLock<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return await work(client);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}

/**
 * Renames a table of a test database. On PostgreSQL it takes the migration lock: another
 * suite's migration lists the tables of every schema, and a table renamed while that list is
 * read fails its query ("relation … does not exist").
 */
export async function renameTable(database: TestDatabase, from: string, to: string): Promise<void> {
  if (database.databaseUrl && database.schema) {
    const schema = database.schema;
    await withSchemaLock(database.databaseUrl, (client) => client.query(`alter table ${schema}.${from} rename to ${to}`));
    return;
  }
  await sql.raw(`alter table ${from} rename to ${to}`).execute(database.handle.db);
}

export interface TestDatabase {
  handle: DatabaseHandle;
  dataDir: string;
  databaseUrl: string | null;
  schema: string | null;
  sqliteFile: string;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database: a temporary SQLite file, or a new PostgreSQL schema. `upTo`
 * stops after that migration (tests of a later one start from its data).
 */
export async function createTestDatabase(options: { upTo?: string } = {}): Promise<TestDatabase> {
  const migrateIt = (handle: DatabaseHandle) =>
    options.upTo === undefined ? migrateToLatest(handle.db, handle.dialect) : migrateTo(handle.db, handle.dialect, options.upTo);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-test-'));
  const sqliteFile = path.join(dataDir, 'basalt.sqlite3');
  if (testDialect() === 'postgres') {
    const url = process.env.TEST_DATABASE_URL as string;
    const schema = testSchemaName();
    const handle = openDatabase({ databaseUrl: url, sqliteFile, schema, poolSize: 5 });
    // Kysely's migrator lists the tables of every schema; a schema dropped at that moment
    // makes the listing fail, so drops take the migrations' advisory lock (migrator.ts).
    await withSchemaLock(url, (client) => client.query(`create schema ${schema}`));
    await migrateIt(handle);
    return {
      handle,
      dataDir,
      databaseUrl: url,
      schema,
      sqliteFile,
      drop: async () => {
        await handle.close().catch(() => undefined);
        await withSchemaLock(url, (client) => client.query(`drop schema ${schema} cascade`));
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const handle = openDatabase({ databaseUrl: null, sqliteFile, schema: null });
  await migrateIt(handle);
  return {
    handle,
    dataDir,
    databaseUrl: null,
    schema: null,
    sqliteFile,
    drop: async () => {
      await handle.close().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
