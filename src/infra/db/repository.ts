import type { Executor } from './database.js';

/**
 * The queries of a table or two, over the database or an open transaction. A module's
 * index.ts builds each repository once over the database and hands it to its services;
 * `repo.on(trx)` is the same repository inside a transaction, the one way to bind one.
 */
export abstract class Repository {
  constructor(protected readonly db: Executor) {}

  /** This repository over `executor` (a transaction the caller opened, or a publisher's). */
  on(executor: Executor): this {
    const Self = this.constructor as new (db: Executor) => this;
    return new Self(executor);
  }
}
