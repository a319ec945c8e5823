import { existsSync } from 'node:fs';
import type { Config } from '../config/index.js';
import { CliError } from './command.js';
import { refuseNonEmptyPostgres } from './backup.service.js';
import { displayUrl, migrateToLevel } from './database-level.service.js';
import { PostgresTarget, SqliteSource, copyTables, type CopyReport } from './table-transfer.repository.js';

export interface DbCopyReport extends CopyReport {
  readonly migrations: readonly string[];
}

/**
 * `basalt db copy --to postgres://…`: the configured SQLite database into an empty PostgreSQL
 * database (the schema its search_path selects). The schema is built by the migrations to the
 * source's level, then every table is copied in one transaction (parents first, in batches),
 * sequences are set past the largest ids, and every table's row count is compared before the
 * commit. The source is read as of one moment; writes a running server makes after it are not
 * copied, so the server is stopped first (docs/operations.md).
 */
export async function copyDatabase(config: Config, to: string, progress: (line: string) => void): Promise<DbCopyReport> {
  if (config.databaseUrl !== null)
    throw new CliError('DATABASE_URL is set: db copy reads the SQLite database, so run it with DATABASE_URL unset');
  if (!/^postgres(ql)?:\/\//.test(to)) throw new CliError('--to must be a postgres:// URL');
  if (!existsSync(config.sqliteFile)) throw new CliError(`there is no SQLite database at ${config.sqliteFile}`);
  await refuseNonEmptyPostgres(to);
  const source = new SqliteSource(config.sqliteFile);
  try {
    const migrations = await source.migrations();
    progress(`schema: running ${migrations.length} migrations on ${displayUrl(to)}`);
    await migrateToLevel({ dialect: 'postgres', url: to }, migrations);
    const target = await PostgresTarget.open(to);
    try {
      const report = await copyTables(source, target, progress);
      return { ...report, migrations };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
