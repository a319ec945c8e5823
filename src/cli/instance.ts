import type { FastifyInstance } from 'fastify';
import type { Modules } from '../app.js';
import type { Config } from '../config/index.js';
import type { DatabaseHandle } from '../infra/db/index.js';
import { CliError, type CliContext } from './command.js';

/** The server's modules, built as the server builds them but never listening. */
export interface Instance {
  readonly config: Config;
  readonly database: DatabaseHandle;
  readonly modules: Modules;
}

/** Opens the configured database, or one clear line when it cannot be reached. */
export async function openConfiguredDatabase(config: Config): Promise<DatabaseHandle> {
  const { openDatabase } = await import('../infra/db/index.js');
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    sqliteFile: config.sqliteFile,
    schema: config.databaseSchema,
    poolSize: 2,
  });
  try {
    await database.ping();
  } catch (error) {
    await database.close().catch(() => undefined);
    throw new CliError(`the database cannot be reached (${(error as Error).message})`);
  }
  return database;
}

/**
 * Runs `work` with the server's services: `buildApp` builds every module over the configured
 * database exactly as the server does (so bus subscribers, cache-epoch bumps and rules all
 * apply) but the app never listens, starts no jobs and is not made ready (which would create
 * `root` on a fresh database). Safe beside a running server on the same data: SQLite in WAL mode
 * with a busy timeout, PostgreSQL with its own transactions; the epochs a write bumps tell the
 * server's caches. Refuses a database with pending migrations: `basalt migrate` first.
 */
export async function withInstance<T>(ctx: CliContext, work: (instance: Instance) => Promise<T>): Promise<T> {
  const config = ctx.config();
  const database = await openConfiguredDatabase(config);
  let app: FastifyInstance | null = null;
  try {
    const { migrationStatus } = await import('../infra/db/index.js');
    const pending = (await migrationStatus(database.db, database.dialect)).filter((m) => m.executedAt === null);
    if (pending.length > 0) {
      throw new CliError(`the database has ${pending.length} pending migration(s) (${pending[0]?.name} …): run basalt migrate first`);
    }
    const { buildApp } = await import('../app.js');
    app = await buildApp(config, { database, startJobs: false, routes: false, logger: { level: 'warn', stream: process.stderr } });
    return await work({ config, database, modules: app.modules });
  } finally {
    if (app) {
      await app.modules.identity.tokens.flushTouches().catch(() => undefined);
      await app.platform.limiter.store.close().catch(() => undefined);
    }
    await database.close().catch(() => undefined);
  }
}

/** A service's refusal as one line: `email is invalid; password is too short (…)`, `Username has already been taken`. */
export async function asCliError(error: unknown): Promise<unknown> {
  const { AppError, ValidationError } = await import('../infra/errors/index.js');
  if (error instanceof ValidationError) {
    const flatten = (messages: object, prefix: string): string[] =>
      Object.entries(messages).flatMap(([field, value]) =>
        Array.isArray(value) ? [`${prefix}${field} ${value.join(', ')}`] : flatten(value as object, `${prefix}${field}.`),
      );
    return new CliError(flatten(error.messages, '').join('; '));
  }
  if (error instanceof AppError) return new CliError(error.message);
  return error;
}
