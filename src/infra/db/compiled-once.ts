import type { Compilable, CompiledQuery } from 'kysely';
import { directSqliteOf, type DirectSqlite, type Executor } from './database.js';
import { effectOf, type StatementEffect } from './epoch-tables.js';
import { replaceNul } from './nul-plugin.js';

/** A statement compiled for one adapter, where its values go, and the writes it does. */
interface Compiled<Row> {
  compiled: CompiledQuery<Row>;
  order: number[];
  postgres: boolean;
  effect: StatementEffect;
}

/**
 * A query whose SQL is built and compiled once per dialect, then run with new values:
 * building and compiling with Kysely costs more than running a small prepared query
 * (docs/perf-lab.md). The builder receives placeholders for its values and must give the
 * same SQL whatever they are (no `IN` lists of varying length, no optional clauses).
 * On SQLite, outside transactions, the statement runs on the connection directly: Kysely's
 * connection lock and promise chain cost more than the statement itself.
 */
export class CompiledOnce<Row, Args extends readonly unknown[]> {
  private readonly byAdapter = new WeakMap<object, Compiled<Row>>();

  constructor(
    private readonly arity: Args['length'],
    private readonly build: (db: Executor, ...placeholders: never[]) => Compilable<Row>,
  ) {}

  async rows(db: Executor, ...args: Args): Promise<Row[]> {
    const entry = this.entryFor(db);
    const parameters = this.parametersOf(entry, args);
    const direct = entry.postgres ? undefined : directSqliteOf(db);
    if (direct) return this.runDirect(direct, entry, parameters);
    // Field by field: a leading spread would give each query object a map of its own (see src/infra/audit.ts auditEntry).
    const { query, queryId, sql } = entry.compiled;
    const result = await db.executeQuery<Row>({ query, queryId, sql, parameters });
    return result.rows;
  }

  /**
   * The statement run at once where `rows` would run it on SQLite's connection directly, with no
   * promise: true when it ran, false when the caller must use `rows` (PostgreSQL, or another
   * request's transaction holds the connection). For small writes on hot paths (audit events).
   */
  runNow(db: Executor, ...args: Args): boolean {
    const entry = this.entryFor(db);
    const direct = entry.postgres ? undefined : directSqliteOf(db);
    if (!direct) return false;
    this.runDirect(direct, entry, this.parametersOf(entry, args));
    return true;
  }

  private entryFor(db: Executor): Compiled<Row> {
    const executor = db.getExecutor();
    let entry = this.byAdapter.get(executor.adapter);
    if (!entry) {
      const placeholders = Array.from({ length: this.arity }, (_, i) => `\u0001compiled-once-${i}\u0001`);
      const compiled = this.build(db, ...(placeholders as never[])).compile();
      // Where each placeholder ended up among the compiled parameters (-1: a constant of the query).
      const order = compiled.parameters.map((value) => placeholders.indexOf(value as string));
      if (placeholders.some((_, i) => !order.includes(i))) throw new Error('CompiledOnce: a placeholder is not used by the query');
      const postgres = executor.adapter.constructor.name.startsWith('Postgres');
      entry = { compiled, order, postgres, effect: effectOf(compiled.query) };
      this.byAdapter.set(executor.adapter, entry);
    }
    return entry;
  }

  private parametersOf({ compiled, order, postgres }: Compiled<Row>, args: Args): unknown[] {
    return order.map((i, at) => {
      const value = i < 0 ? compiled.parameters[at] : args[i];
      return postgres ? replaceNul(value) : value;
    });
  }

  private runDirect(direct: DirectSqlite, { compiled, effect }: Compiled<Row>, parameters: unknown[]): Row[] {
    const statement = direct.prepare(compiled.sql);
    const rows = statement.reader ? (statement.all(parameters) as Row[]) : [];
    const changed = statement.reader ? rows.length : statement.run(parameters).changes;
    // Kysely's driver, which bumps the cache epochs a write ends (epoch-bumps.ts), is skipped here.
    for (const epoch of direct.bumper.due(direct.sqlite, effect, changed)) {
      direct.prepare(direct.bumper.bumpSql).run(epoch);
      direct.bumper.bumped(epoch);
    }
    return rows;
  }

  async first(db: Executor, ...args: Args): Promise<Row | undefined> {
    return (await this.rows(db, ...args))[0];
  }
}
