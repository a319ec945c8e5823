// Starts Basalt for one scenario: a fresh data directory (SQLite, or PostgreSQL when
// BENCH_SCENARIO_DATABASE_URL is set: a fresh schema), seeds, listens, and prints
// {"port": N, "request": {...}} for the load generator.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { migrateToLatest, openDatabase } from '../../src/infra/db/index.js';
import { directSqliteOf } from '../../src/infra/db/database.js';
import { auditScenarios, BENCH_ROOT_TOKEN, scenarios } from '../scenarios.js';
import { profileOnSignal } from './profile.js';
import { auditToggle } from './audit-toggle.js';
import { startMailSinkProcess } from '../mail-sink.js';

const name = process.argv[2] ?? '';
const scenario: { seed(app: FastifyInstance): Promise<unknown>; mailSink?: boolean } | undefined = scenarios[name] ?? auditScenarios[name];
if (!scenario) throw new Error(`unknown scenario ${name}`);

// The events scenarios start on a directory seeded once by bench/events-prepare.ts.
const dataDir = process.env.BENCH_DATA_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-'));
// BENCH_DATABASE_URL only adds the PostgreSQL scale-out rows; scenarios stay on SQLite.
const databaseUrl = process.env.BENCH_SCENARIO_DATABASE_URL ?? null;
let schema: string | null = null;
if (databaseUrl) {
  schema = process.env.BENCH_SCHEMA ?? `bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`create schema if not exists ${schema}`);
  await client.end();
}
// A scenario that mails gets a local SMTP server in this process (its cost counts against the scenario).
const sink = scenario.mailSink ? await startMailSinkProcess() : null;
const config = loadConfig(
  {
    ...(sink ? { SMTP_URL: sink.url, EMAIL_FROM: 'Basalt <basalt@bench.test>' } : {}),
    DATA_DIR: dataDir,
    // BENCH_LOG_LEVEL=warn shows why a request failed (the load counts non-2xx answers).
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    BASALT_ROOT_TOKEN: BENCH_ROOT_TOKEN,
    BASALT_ROOT_PASSWORD: 'bench-root-password',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    RATE_LIMITS: '',
    // The outbox's rate while busy, for trying other values (docs/performance.md "Mail").
    ...(process.env.OUTBOX_BUSY_PER_SECOND ? { OUTBOX_BUSY_PER_SECOND: process.env.OUTBOX_BUSY_PER_SECOND } : {}),
    // Millions of new events go to one project: the per-project bound (checked all the same) must not refuse them.
    ERROR_TRACKING_MAX_EVENTS: '100000000',
  },
  { databaseSchema: schema },
);
const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: config.sqliteFile, schema });
await migrateToLatest(database.db, database.dialect);
await database.close();
const app = await buildApp(config);
await app.ready();
// bench/audit-ab.ts's "off" server: the same code with an audit subscriber that writes nothing.
if (process.env.BENCH_AUDIT === 'off') app.modules.audit.audit.record = () => Promise.resolve();
// Whether any row more in the transaction costs what the audit row does: a one-column row instead.
if (process.env.BENCH_AUDIT === 'scratch') {
  await sql`create table bench_scratch (id integer primary key, v text)`.execute(app.platform.db);
  app.modules.audit.audit.record = (entry, executor) => {
    directSqliteOf(executor)?.prepare('insert into bench_scratch (v) values (?)').run(entry.eventName);
    return Promise.resolve();
  };
}
// bench/audit-toggle.ts: auditing switched on and off within this one server while it is loaded.
const toggle =
  process.env.BENCH_AUDIT === 'toggle' || process.env.BENCH_AUDIT === 'toggle-null'
    ? auditToggle(app, process.env.BENCH_AUDIT === 'toggle-null')
    : null;
const request = process.env.BENCH_SEED === '0' ? JSON.parse(process.env.BENCH_REQUEST ?? '{}') : await scenario.seed(app);
await app.listen({ port: Number(process.env.BENCH_PORT ?? 0), host: '127.0.0.1' });
const address = app.server.address() as { port: number };
process.stdout.write(`${JSON.stringify({ port: address.port, request, schema })}\n`);
const profiler = profileOnSignal();
process.on('SIGTERM', () => {
  if (toggle) process.stdout.write(`${JSON.stringify({ toggle: toggle.report() })}\n`);
  void profiler
    .stop()
    .then(() => app.close())
    .then(() => {
      sink?.close();
      process.exit(0);
    });
});
