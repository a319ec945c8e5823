import { closeSync, openSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { ReplaceNulPlugin } from './nul-plugin.js';
import type { DB } from './schema.js';
import { BackgroundCheckpointer } from './checkpointer.js';
import { EpochBumper, type EpochDeclarations } from './epoch-bumps.js';
import { WriteBatcher, type Transact } from './write-batcher.js';
import { withCommitBuffer } from './commit-buffer.js';
import { immediateSqliteDialect } from './sqlite-immediate.js';

export type Dialect = 'sqlite' | 'postgres';
export type Database = Kysely<DB>;
/** A connection or an open transaction: repositories accept either. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface DatabaseHandle {
  readonly db: Database;
  readonly dialect: Dialect;
  /**
   * A write transaction for one request, committed before it settles: on SQLite, those
   * arriving together share a commit (infra/db/write-batcher.ts).
   *
   * Which to use: `transact` is for the small, independent writes of hot endpoints that many
   * clients call at once (the Sentry collector, the alert receiver, OAuth's storage, which the
   * token endpoint drives and its other callers share, and personal tokens). Its transaction
   * carries a commit buffer: `gatherForCommit` values are written once, just before the COMMIT.
   * Its work may run twice (alone again when a neighbour in its batch threw), so it touches only
   * the transaction it is given and has no effect outside it, and it returns expected refusals
   * as values: a throw rolls back the whole batch, so only rare failures throw (a retried event).
   * Every other write (changes whose rules throw, job handlers, long or multi-step work) opens
   * `db.transaction()`. Either way repositories join it with `repo.on(trx)`.
   */
  readonly transact: Transact;
  /**
   * Which tables feed which cache epoch, declared by the modules that cache (infra/db/epochs.ts);
   * writes to them bump it in their transaction, whoever makes them.
   */
  readonly epochs: EpochDeclarations;
  /**
   * A value that changes whenever any transaction commits to the database, from this process
   * or another; `null` when it cannot be told (an open SQLite transaction on this connection).
   * Answers derived from the database stay valid while it is unchanged (version-cache.ts).
   * `scope` (a request) may keep one read for its later calls, where that is cheaper.
   */
  dataVersion(scope?: object): Promise<string | null>;
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
  /**
   * SQLite: whether this connection runs the background checkpointer (default true). A second
   * connection of the same process (the outbox's thread) leaves the log to the first one's.
   */
  checkpoints?: boolean;
}

// PostgreSQL BIGINT (int8) carries epoch-millisecond timestamps and counters that fit
// in a double, so they are read as numbers rather than strings.
pg.types.setTypeParser(20, (value) => Number(value));

/** The synchronous SQLite connection behind a Kysely instance, for statements that skip Kysely. */
export interface DirectSqlite {
  readonly sqlite: SQLite.Database;
  /** Prepared statements shared with Kysely's driver. */
  prepare(sql: string): SQLite.Statement;
  /** Statements run here bump cache epochs as Kysely's would. */
  readonly bumper: EpochBumper;
}
/** By query adapter: one per database, shared by the Kysely instance and its transactions. */
const directHandles = new WeakMap<object, DirectSqlite>();

/**
 * The SQLite connection of `db` when a statement may run on it directly, bypassing Kysely's
 * connection lock and promise chain (which cost more than a small statement):
 * - `db` is a transaction: it is the one open on the single connection (Kysely holds the
 *   connection for it), so the statement runs inside it exactly as Kysely would run it;
 * - `db` is the database and no transaction is open: the statement can neither see another
 *   request's uncommitted rows nor land inside its transaction.
 * Otherwise undefined: the caller goes through Kysely, which waits its turn.
 */
export function directSqliteOf(db: Executor): DirectSqlite | undefined {
  const direct = directHandles.get(db.getExecutor().adapter);
  if (!direct) return undefined;
  if (db.isTransaction) return direct;
  return direct.sqlite.inTransaction ? undefined : direct;
}

export function openDatabase(options: DatabaseOptions): DatabaseHandle {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.schema, options.poolSize ?? 10)
    : openSqlite(options.sqliteFile, options.checkpoints ?? true);
}

function openSqlite(file: string, checkpoints: boolean): DatabaseHandle {
  // A new database file is the owner's alone (0600); SQLite gives its -wal and -shm files the
  // mode of the database file. An existing file keeps the mode its operator chose.
  if (file !== ':memory:') closeSync(openSync(file, 'a', 0o600));
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL in WAL mode survives process crashes (SIGKILL) without losing a committed
  // transaction; only an OS crash or power loss can roll back the last ones.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Reads through a memory map instead of a read() per page: on a virtual machine each
  // system call is a measurable share of a small query (docs/perf-lab.md). Pages read
  // through the map bypass the page cache, which keeps SQLite's 2 MB default: every commit
  // walks the cache's whole hash table, so a larger cache made each commit dearer
  // (docs/decisions.md "Data and performance"). Neither setting changes what is durable.
  sqlite.pragma('mmap_size = 268435456');
  sqlite.pragma('cache_size = -2000');
  // Checkpoints run on a worker thread (infra/db/checkpointer.ts), which keeps the log under
  // about 15,000 pages; this one only if it lags.
  sqlite.pragma('wal_autocheckpoint = 40000');
  const checkpointer = checkpoints ? new BackgroundCheckpointer(file) : null;
  const statements = withStatementCache(sqlite);
  // One connection: whichever path a statement takes, it is in the one transaction open.
  const bumper = new EpochBumper('?', () => sqlite);
  const db = new Kysely<DB>({ dialect: bumper.dialect(immediateSqliteDialect({ database: statements })) });
  bumper.adapter = db.getExecutor().adapter;
  const batcher = new WriteBatcher(db);
  checkpointer?.holdWritesWith(batcher.quiesce);
  directHandles.set(db.getExecutor().adapter, { sqlite, prepare: (sql) => statements.prepare(sql), bumper });
  // data_version moves when another connection commits; total_changes() counts the rows this
  // connection has changed (rolled back ones too, which only costs a needless miss).
  const otherCommits = sqlite.prepare('pragma data_version').pluck();
  const ownChanges = sqlite.prepare('select total_changes()').pluck();
  return {
    db,
    dialect: 'sqlite',
    transact: batcher.transact,
    epochs: bumper,
    // Inside a transaction this connection reads rows that may still roll back: no version.
    dataVersion: async () => (sqlite.inTransaction ? null : `${String(otherCommits.get())}:${String(ownChanges.get())}`),
    ping: async () => {
      sqlite.prepare('select 1').get();
    },
    poolStats: () => ({ waiting: 0, total: 1 }),
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
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

/**
 * PostgreSQL's data version is the server's snapshot (xmin:xmax:in-progress ids), which differs
 * after any commit that wrote: a writing transaction is either in the list or above xmax the
 * first time it is read. It is cluster-wide, so writes to other databases also count (a needless
 * miss, never a stale hit).
 *
 * A read may serve every request that arrived before it was issued: those requests were sent
 * after every commit they can know of, each acknowledged before, so the read sees them. Hence
 * two ways to share one:
 * - requests handled in one turn of the event loop share one read, as cache epochs do
 *   (epochs.ts): they arrived together, before this turn's read was issued;
 * - one request (its `scope`) keeps its first read for its later ones.
 * A statement or commit of this process drops both, so a handler that writes and then reads
 * never gets a version from before its own write. Under load a kept page view then costs one
 * round trip per turn instead of one per kept part of the page.
 */
function versionReadShared(bumper: EpochBumper, read: () => Promise<string | null>): (scope?: object) => Promise<string | null> {
  let shared: Promise<string | null> | null = null;
  let generation = 0;
  const byScope = new WeakMap<object, { generation: number; version: Promise<string | null> }>();
  bumper.onChange = () => {
    shared = null;
    generation += 1;
  };
  const readThisTurn = (): Promise<string | null> => {
    if (shared) return shared;
    const mine = read();
    shared = mine;
    setImmediate(() => {
      if (shared === mine) shared = null;
    });
    // A failed read is not shared with later callers.
    mine.catch(() => {
      if (shared === mine) shared = null;
      generation += 1;
    });
    return mine;
  };
  return (scope) => {
    if (!scope) return readThisTurn();
    const kept = byScope.get(scope);
    if (kept && kept.generation === generation) return kept.version;
    const version = readThisTurn();
    byScope.set(scope, { generation, version });
    return version;
  };
}

/**
 * A connection URL's `options` (`?options=-c statement_timeout=5000`) taken out of it, so that they
 * join the schema's search path: pg lets the URL's `options` replace the pool's, which would put
 * every query in the default schema.
 */
function withoutOptions(url: string): { url: string; options: string } {
  try {
    const parsed = new URL(url);
    const options = parsed.searchParams.get('options') ?? '';
    parsed.searchParams.delete('options');
    return { url: parsed.toString(), options };
  } catch {
    return { url, options: '' };
  }
}

function openPostgres(url: string, schema: string | null, max: number): DatabaseHandle {
  const split = schema ? withoutOptions(url) : { url, options: '' };
  const pool = new pg.Pool({
    connectionString: split.url,
    max,
    connectionTimeoutMillis: 5000,
    ...(schema ? { options: [split.options, `-c search_path=${schema}`].filter(Boolean).join(' ') } : {}),
  });
  const bumper = new EpochBumper('$1');
  const db = new Kysely<DB>({ dialect: bumper.dialect(new PostgresDialect({ pool })), plugins: [new ReplaceNulPlugin()] });
  bumper.adapter = db.getExecutor().adapter;
  return {
    db,
    dialect: 'postgres',
    // Concurrent transactions on several connections: each request's own, no batching.
    transact: (work) => db.transaction().execute(withCommitBuffer(work)),
    epochs: bumper,
    dataVersion: versionReadShared(
      bumper,
      async () => (await pool.query<{ v: string }>('select pg_current_snapshot()::text as v')).rows[0]?.v ?? null,
    ),
    ping: async () => {
      await pool.query('select 1');
    },
    poolStats: () => ({ waiting: pool.waitingCount, total: pool.totalCount }),
    close: () => db.destroy(),
  };
}
