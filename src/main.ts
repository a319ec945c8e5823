import cluster from 'node:cluster';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config/index.js';
import { migrateToLatest, openDatabase } from './infra/db/index.js';

/** Every problem with the environment at once, then exit 1. */
function fail(message: string): never {
  process.stderr.write(`basalt: ${message}\n`);
  process.exit(1);
}

async function prepareDatabase(config: Config): Promise<void> {
  const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: config.sqliteFile, schema: config.databaseSchema });
  try {
    await database.ping();
  } catch (error) {
    await database.close().catch(() => undefined);
    fail(`invalid configuration:\n  - DATABASE_URL: cannot connect (${(error as Error).message})`);
  }
  const applied = await migrateToLatest(database.db, database.dialect);
  if (applied.length > 0) process.stdout.write(`basalt: applied migrations ${applied.join(', ')}\n`);
  await database.close();
}

async function serve(config: Config): Promise<void> {
  const app = await buildApp(config);
  let closing = false;
  const shutdown = (signal: string) => {
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
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  if (config.workers > 1 && cluster.isPrimary) {
    // Migrate once, then fork; the workers share the port through the primary.
    await prepareDatabase(config);
    for (let i = 0; i < config.workers; i += 1) cluster.fork({ BASALT_WORKER: String(i) });
    cluster.on('exit', (worker, code) => {
      process.stderr.write(`basalt: worker ${worker.process.pid ?? '?'} exited with ${code}\n`);
    });
    const stop = () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    return;
  }
  if (cluster.isPrimary) await prepareDatabase(config);
  await serve(config);
}

main().catch((error: unknown) => fail(error instanceof Error ? (error.stack ?? error.message) : String(error)));
