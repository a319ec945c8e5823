import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { ManualClock, type Clock } from '../../src/infra/clock.js';
import { openDatabase } from '../../src/infra/db/index.js';
import { checkContract } from './contract-hook.js';
import { createTestDatabase, type TestDatabase } from './database.js';

/** Another handle on an existing test database; closing it leaves the database in place. */
async function reopen(existing: TestDatabase): Promise<TestDatabase> {
  const handle = openDatabase({ databaseUrl: existing.databaseUrl, sqliteFile: existing.sqliteFile, schema: existing.schema, poolSize: 5 });
  return { ...existing, handle, drop: () => handle.close() };
}

export const ROOT_TOKEN = 'bsp_test-root-token-0123456789abcdef';

export interface TestAppOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  /**
   * The app's clock is a ManualClock starting at the real time (tests move it with
   * `manual.advance`) unless this is false: then the system clock, for tests that compare the
   * app's times with a clock it does not share (another process, the file system, a browser).
   */
  manualClock?: boolean;
  /**
   * A second app instance on the same database (its own connection or pool), as a second
   * process would be: for tests of state shared across processes.
   */
  sameDatabaseAs?: TestApp;
}

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  database: TestDatabase;
  clock: Clock;
  /** The app's clock unless `manualClock: false` was asked for. */
  manual: ManualClock | null;
  /** `inject` under `/api/v4` with root's token unless `token` is given (`null`: anonymous). */
  api(
    method: InjectOptions['method'],
    url: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string>; query?: Record<string, string> },
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The real app on a fresh migrated database, with `root` holding ROOT_TOKEN. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.sameDatabaseAs ? await reopen(options.sameDatabaseAs.database) : await createTestDatabase();
  const config = loadConfig(
    {
      DATA_DIR: database.dataDir,
      BASALT_ROOT_TOKEN: ROOT_TOKEN,
      BASALT_ROOT_PASSWORD: 'root-password-123',
      EXTERNAL_URL: 'http://basalt.test',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      // A busy test machine stalls the event loop at start-up; suites that test shedding turn it on.
      LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      ...options.env,
    },
    { databaseSchema: database.schema, sqliteFile: database.sqliteFile, ...options.config },
  );
  // A second app on the same database shares the first one's time, as two processes would.
  const manual = options.manualClock === false ? null : (options.sameDatabaseAs?.manual ?? new ManualClock(Date.now()));
  const app = await buildApp(config, { database: database.handle, startJobs: false, ...(manual ? { clock: manual } : {}) });
  await app.ready();
  checkContract(app);
  return {
    app,
    config,
    database,
    clock: manual ?? { now: () => Date.now() },
    manual,
    api: (method, url, opts = {}) => {
      const headers: Record<string, string> = { ...opts.headers };
      const token = opts.token === undefined ? ROOT_TOKEN : opts.token;
      if (token !== null) headers['private-token'] = token;
      return app.inject({
        method,
        url: url.startsWith('/api/') || url.startsWith('/-/') || url.startsWith('/oauth') ? url : `/api/v4${url}`,
        headers,
        ...(opts.query ? { query: opts.query } : {}),
        ...(opts.body !== undefined ? { payload: opts.body as InjectOptions['payload'] } : {}),
      });
    },
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
}
