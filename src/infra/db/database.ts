import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { ReplaceNulPlugin } from './nul-plugin.js';
import type { DB } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';
export type Database = Kysely<DB>;
/** A connection or an open transaction: repositories accept either. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface DatabaseHandle {
  readonly db: Database;
  readonly dialect: Dialect;
  /** Liveness of the connection, for `/-/readiness`. */
  ping(): Promise<void>;
  /** Connections in use and waiting, for load shedding and readiness. */
  poolStats(): { waiting: number; total: number };
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  sqliteFile: string;
  schema: string | null;
  poolSize?: number;
}

// PostgreSQL BIGINT (int8) carries epoch-millisecond timestamps and counters that fit
// in a double, so they are read as numbers rather than strings.
pg.types.setTypeParser(20, (value) => Number(value));

export function openDatabase(options: DatabaseOptions): DatabaseHandle {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.schema, options.poolSize ?? 10) : openSqlite(options.sqliteFile);
}

function openSqlite(file: string): DatabaseHandle {
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL in WAL mode survives process crashes (SIGKILL) without losing a committed
  // transaction; only an OS crash or power loss can roll back the last ones.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    db,
    dialect: 'sqlite',
    ping: async () => {
      sqlite.prepare('select 1').get();
    },
    poolStats: () => ({ waiting: 0, total: 1 }),
    close: () => db.destroy(),
  };
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running a
 * small query, so statements are kept by their SQL text (bounded: the query builder
 * produces a small set of shapes, `IN (...)` lists aside).
 */
function withStatementCache(sqlite: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string): SQLite.Statement {
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= 1000) statements.clear();
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    close(): void {
      sqlite.close();
    },
  };
}

function openPostgres(url: string, schema: string | null, max: number): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 5000,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins: [new ReplaceNulPlugin()] });
  return {
    db,
    dialect: 'postgres',
    ping: async () => {
      await pool.query('select 1');
    },
    poolStats: () => ({ waiting: pool.waitingCount, total: pool.totalCount }),
    close: () => db.destroy(),
  };
}
