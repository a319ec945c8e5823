import {
  CompiledQuery,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type SqliteDialectConfig,
} from 'kysely';

/**
 * SQLite's transactions, begun `IMMEDIATE`: each takes the write lock at its BEGIN, waiting for
 * it as `busy_timeout` allows. A deferred transaction (SQLite's default, and Kysely's `begin`)
 * reads from the snapshot of its first read and asks for the lock at its first write; when
 * another connection has committed in between (the outbox's thread, another process on the same
 * file, `basalt admin` while the server runs), SQLite
 * cannot move the snapshot and answers SQLITE_BUSY at once, without waiting: a request that
 * reads before it writes (an alert's fingerprint, then its project's next iid) failed with 500
 * "database is locked" under load. Every transaction of this connection writes or sits in the
 * one-connection queue anyway, so taking the lock first costs nothing the deferred one did not.
 */
export function immediateSqliteDialect(config: SqliteDialectConfig): Dialect {
  return new ImmediateSqliteDialect(config);
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.config);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}
