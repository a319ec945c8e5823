import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { forgetTurnRead, type EpochName } from './epochs.js';
import { EpochRegistry, NO_EFFECT, effectOf, type EpochTables, type StatementEffect } from './epoch-tables.js';

const NO_EPOCHS: readonly EpochName[] = [];

/** What modules see of a database's epochs: they declare which tables feed which epoch. */
export interface EpochDeclarations {
  declare(epoch: EpochName, tables: EpochTables): void;
  declared(): ReadonlyMap<EpochName, EpochTables>;
}

/**
 * Bumps the cache epochs (epochs.ts) a write ends, keyed by the tables modules declared, so
 * no write path can forget one. It works on the connection, under Kysely's query builder:
 * there a write and its bump run on the same connection, hence in the same transaction, and
 * the count of changed rows is known (a write that changed nothing bumps nothing). A Kysely
 * plugin would see the query but neither the connection nor the result, and statements of
 * CompiledOnce on SQLite skip Kysely altogether; compiled-once.ts reports those here too.
 */
export class EpochBumper implements EpochDeclarations {
  private readonly registry = new EpochRegistry();
  /**
   * Epochs bumped by the transaction open on a connection (keyed by it). A commit needs to
   * move a counter once, however many of its writes bump it (a shared commit of
   * write-batcher.ts holds dozens of refresh grants). A read of the counters inside the
   * transaction forgets the marks, so a write after it moves the counter past what it read.
   */
  private readonly bumpedIn = new WeakMap<object, Set<EpochName>>();
  /** The query adapter of the database, whose per-turn reads a bump ends (epochs.ts). */
  adapter: object | undefined;
  /**
   * Called after any statement that is not a plain select, and after every commit: the
   * database's data version read this turn (database.ts) may predate it and is read again.
   */
  onChange: (() => void) | undefined;

  /** The bump of one counter, named by the statement's one parameter. */
  readonly bumpSql: string;

  constructor(
    placeholder: '?' | '$1',
    /** The transaction a connection stands for: SQLite has one, whichever path a statement takes. */
    private readonly keyOf: (connection: object) => object = (connection) => connection,
  ) {
    this.bumpSql =
      `insert into "cache_epochs" ("name", "value") values (${placeholder}, 1) ` +
      `on conflict ("name") do update set "value" = "cache_epochs"."value" + 1`;
  }

  declare(epoch: EpochName, tables: EpochTables): void {
    this.registry.declare(epoch, tables);
  }

  declared(): ReadonlyMap<EpochName, EpochTables> {
    return this.registry.declared();
  }

  began(connection: object): void {
    this.bumpedIn.set(this.keyOf(connection), new Set());
  }

  ended(connection: object): void {
    this.bumpedIn.delete(this.keyOf(connection));
  }

  /** A savepoint rolled back may have taken a bump with it. */
  rolledBackPart(connection: object): void {
    this.bumpedIn.get(this.keyOf(connection))?.clear();
  }

  /**
   * The epochs to bump now on `connection` after a statement (its `effectOf`) changed `changed` rows,
   * marked as bumped; the caller runs `bumpSql` for each, on the same connection.
   */
  due(connection: object, effect: StatementEffect, changed: number): readonly EpochName[] {
    if (effect === NO_EFFECT) return NO_EPOCHS;
    if (effect.readsEpochs) this.bumpedIn.get(this.keyOf(connection))?.clear();
    if (effect.writes.length === 0 || changed === 0) return NO_EPOCHS;
    const epochs = this.registry.epochsOf(effect);
    if (epochs.length === 0) return epochs;
    const bumped = this.bumpedIn.get(this.keyOf(connection));
    if (!bumped) return epochs;
    const due = epochs.filter((epoch) => !bumped.has(epoch));
    for (const epoch of due) bumped.add(epoch);
    return due;
  }

  /** After a bump's statement: reads later in this turn go to the database (and wait there for its commit). */
  bumped(epoch: EpochName): void {
    if (this.adapter) forgetTurnRead(this.adapter, epoch);
  }

  /** `dialect` with every write through Kysely reported here. */
  dialect(dialect: Dialect): Dialect {
    return {
      createAdapter: () => dialect.createAdapter(),
      createDriver: () => new BumpingDriver(dialect.createDriver(), this),
      createIntrospector: (db) => dialect.createIntrospector(db),
      createQueryCompiler: () => dialect.createQueryCompiler(),
    };
  }
}

function changedRows(result: QueryResult<unknown>): number {
  return result.numAffectedRows !== undefined ? Number(result.numAffectedRows) : result.rows.length;
}

class BumpingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly bumper: EpochBumper,
  ) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(compiledQuery);
    if (compiledQuery.query.kind !== 'SelectQueryNode') this.bumper.onChange?.();
    const due = this.bumper.due(this.inner, effectOf(compiledQuery.query), changedRows(result));
    for (const epoch of due) {
      await this.inner.executeQuery(CompiledQuery.raw(this.bumper.bumpSql, [epoch]));
      this.bumper.bumped(epoch);
    }
    return result;
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}

class BumpingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, BumpingConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly bumper: EpochBumper,
  ) {}

  private unwrap(connection: DatabaseConnection): DatabaseConnection {
    return connection instanceof BumpingConnection ? connection.inner : connection;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapped = this.wrapped.get(connection);
    if (!wrapped) {
      wrapped = new BumpingConnection(connection, this.bumper);
      this.wrapped.set(connection, wrapped);
    }
    return wrapped;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.inner.beginTransaction(this.unwrap(connection), settings);
    this.bumper.began(this.unwrap(connection));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.bumper.ended(this.unwrap(connection));
    await this.inner.commitTransaction(this.unwrap(connection));
    this.bumper.onChange?.();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.bumper.ended(this.unwrap(connection));
    await this.inner.rollbackTransaction(this.unwrap(connection));
  }

  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    if (!this.inner.savepoint) throw new Error('savepoints are not supported by this dialect');
    await this.inner.savepoint(this.unwrap(connection), name, compileQuery);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    if (!this.inner.rollbackToSavepoint) throw new Error('savepoints are not supported by this dialect');
    this.bumper.rolledBackPart(this.unwrap(connection));
    await this.inner.rollbackToSavepoint(this.unwrap(connection), name, compileQuery);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    if (!this.inner.releaseSavepoint) throw new Error('savepoints are not supported by this dialect');
    await this.inner.releaseSavepoint(this.unwrap(connection), name, compileQuery);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(this.unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
