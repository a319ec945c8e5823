import type { Compilable, CompiledQuery } from 'kysely';
import { directSqliteOf, type Executor } from './database.js';
import { effectOf, type StatementEffect } from './epoch-tables.js';
import { replaceNul } from './nul-plugin.js';

/**
 * A query whose SQL is built and compiled once per dialect, then run with new values:
 * building and compiling with Kysely costs more than running a small prepared query
 * (docs/perf-lab.md). The builder receives placeholders for its values and must give the
 * same SQL whatever they are (no `IN` lists of varying length, no optional clauses).
 * On SQLite, outside transactions, the statement runs on the connection directly: Kysely's
 * connection lock and promise chain cost more than the statement itself.
 */
export class CompiledOnce<Row, Args extends readonly unknown[]> {
  private readonly byAdapter = new WeakMap<
    object,
    { compiled: CompiledQuery<Row>; order: number[]; postgres: boolean; effect: StatementEffect }
  >();

  constructor(
    private readonly arity: Args['length'],
    private readonly build: (db: Executor, ...placeholders: never[]) => Compilable<Row>,
  ) {}

  async rows(db: Executor, ...args: Args): Promise<Row[]> {
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
    const { compiled, order, postgres, effect } = entry;
    const parameters = order.map((i, at) => {
      const value = i < 0 ? compiled.parameters[at] : args[i];
      return postgres ? replaceNul(value) : value;
    });
    const direct = postgres ? undefined : directSqliteOf(db);
    if (direct) {
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
    const result = await db.executeQuery<Row>({ ...compiled, parameters });
    return result.rows;
  }

  async first(db: Executor, ...args: Args): Promise<Row | undefined> {
    return (await this.rows(db, ...args))[0];
  }
}
