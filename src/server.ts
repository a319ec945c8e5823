import cluster from 'node:cluster';
import { buildApp } from './app.js';
import { runPrimary } from './cluster.js';
import { ConfigError, loadConfig, type Config } from './config/index.js';
import { migrateToLatest, openDatabase } from './infra/db/index.js';
import { logLine } from './infra/log-line.js';

/** A start-up failure as one JSON line (every problem at once), then exit 1. */
function fail(msg: string, fields: Record<string, unknown> = {}): never {
  logLine('fatal', msg, fields);
  process.exit(1);
}

async function prepareDatabase(config: Config): Promise<void> {
  const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: config.sqliteFile, schema: config.databaseSchema });
  try {
    await database.ping();
  } catch (error) {
    await database.close().catch(() => undefined);
    fail('invalid configuration', { problems: [`DATABASE_URL: cannot connect (${(error as Error).message})`] });
  }
  const applied = await migrateToLatest(database.db, database.dialect);
  if (applied.length > 0) logLine('info', `applied migrations ${applied.join(', ')}`, { migrations: applied });
  await database.close();
}

async function serve(config: Config): Promise<void> {
  // A signal while the app is still being built: nothing is in flight yet, so just exit.
  let shutdown: ((signal: string) => void) | null = null;
  const onSignal = (signal: string) => (shutdown ? shutdown(signal) : process.exit(0));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  const app = await buildApp(config);
  let closing = false;
  shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  if (cluster.isWorker) {
    // Which process answered, for operators matching a response to its log lines (which carry the pid).
    const worker = String(process.pid);
    app.addHook('onSend', async (_request, reply, payload) => {
      reply.header('x-basalt-worker', worker);
      return payload;
    });
  }
  await app.listen({ port: config.port, host: config.host });
}

/**
 * The server, as `basalt serve` and `node dist/main.js` run it: reads the environment, migrates,
 * then listens (or, with WORKERS>1, forks the workers, which run this again as cluster workers).
 * Every line it writes is JSON (src/infra/log-line.ts before Fastify's logger exists).
 */
export async function runServer(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail('invalid configuration', { problems: error.problems });
    throw error;
  }
  if (config.workers > 1 && cluster.isPrimary) {
    // Migrate once, then fork; the workers share the port through the primary.
    await prepareDatabase(config);
    const log = (message: string) => logLine('info', message);
    if (!config.redisUrl) {
      logLine('warn', `WORKERS=${config.workers} without REDIS_URL: every process counts rate limits on its own`);
    }
    runPrimary({ workers: config.workers, log });
    return;
  }
  if (cluster.isPrimary) await prepareDatabase(config);
  await serve(config);
}

/** An unexpected start-up error as one JSON line, exit 1. */
export function serverCrashed(error: unknown): never {
  return fail(error instanceof Error ? error.message : String(error), {
    err: error instanceof Error ? { type: error.name, message: error.message, stack: error.stack } : { message: String(error) },
  });
}
