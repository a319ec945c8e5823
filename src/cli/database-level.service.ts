import { openDatabase, type DatabaseHandle } from '../infra/db/index.js';
import { migrateTo } from '../infra/db/migrator.js';
import { migrations } from '../infra/db/migrations/index.js';
import { CliError } from './command.js';

/** Where a copy or a restore writes: the server's SQLite file or a PostgreSQL URL (its search_path selects the schema). */
export type DatabaseTarget = { readonly dialect: 'sqlite'; readonly file: string } | { readonly dialect: 'postgres'; readonly url: string };

function open(target: DatabaseTarget): DatabaseHandle {
  return target.dialect === 'sqlite'
    ? openDatabase({ databaseUrl: null, sqliteFile: target.file, schema: null, poolSize: 1 })
    : openDatabase({ databaseUrl: target.url, sqliteFile: ':memory:', schema: null, poolSize: 3 });
}

/** Refuses a level this code cannot build: a migration it does not know came from a newer Basalt. */
export function checkKnownMigrations(level: readonly string[]): void {
  const unknown = level.filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length > 0) {
    throw new CliError(
      `the data was migrated by a newer Basalt (unknown migrations: ${unknown.join(', ')}); install that version or later`,
    );
  }
}

/**
 * Builds the schema by the migrations up to the source's level (not beyond: a later migration
 * may transform rows, so it runs on the copied data when the server next starts), then checks
 * that exactly those migrations are applied.
 */
export async function migrateToLevel(target: DatabaseTarget, level: readonly string[]): Promise<void> {
  checkKnownMigrations(level);
  const last = [...level].sort().at(-1);
  if (last === undefined) throw new CliError('the source database has no migrations applied: nothing to copy');
  const handle = open(target);
  try {
    await migrateTo(handle.db, handle.dialect, last);
    const applied = (await handle.db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute()) as { name: string }[];
    const names = applied.map((r) => r.name).sort();
    const wanted = [...level].sort();
    if (names.join(',') !== wanted.join(',')) {
      throw new CliError(
        `the migrations could not be brought to the source's level (applied: ${names.join(', ')}; wanted: ${wanted.join(', ')})`,
      );
    }
  } finally {
    await handle.close();
  }
}

/** A URL with its password masked, for messages. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the given URL';
  }
}
