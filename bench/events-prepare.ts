// Seeds a data directory once for the events scenarios (1,000,000 events unless
// BENCH_EVENTS says otherwise) and prints {"dir", "schema", "seeded"}; the scenario servers
// then start on a copy-free reuse of it (reads only). With BENCH_SCENARIO_DATABASE_URL the
// events go into a fresh PostgreSQL schema instead, which the servers then use.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { migrateToLatest, openDatabase } from '../src/infra/db/index.js';
import { seedEvents } from './events-seed.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-events-'));
const databaseUrl = process.env.BENCH_SCENARIO_DATABASE_URL ?? null;
let schema: string | null = null;
if (databaseUrl) {
  schema = `bench_events_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
}
const handle = openDatabase({ databaseUrl, sqliteFile: path.join(dir, 'basalt.sqlite3'), schema });
await migrateToLatest(handle.db, handle.dialect);
const seeded = await seedEvents(handle.db, handle.dialect, { events: Number(process.env.BENCH_EVENTS ?? 1_000_000), until: Date.now() });
await handle.close();
process.stdout.write(
  `${JSON.stringify({ dir, schema, seeded: { projectId: seeded.projectIds[0], userId: seeded.userIds[0], first: seeded.firstEventAt, last: seeded.lastEventAt } })}\n`,
);
