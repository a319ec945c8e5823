// Seeds a data directory once for the events scenarios (1,000,000 events unless
// BENCH_EVENTS says otherwise) and prints {"dir", "seeded"}; the scenario servers then
// start on a copy-free reuse of it (reads only).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrateToLatest, openDatabase } from '../src/infra/db/index.js';
import { seedEvents } from './events-seed.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-events-'));
const handle = openDatabase({ databaseUrl: null, sqliteFile: path.join(dir, 'basalt.sqlite3'), schema: null });
await migrateToLatest(handle.db, handle.dialect);
const seeded = await seedEvents(handle.db, handle.dialect, { events: Number(process.env.BENCH_EVENTS ?? 1_000_000), until: Date.now() });
await handle.close();
process.stdout.write(
  `${JSON.stringify({ dir, seeded: { projectId: seeded.projectIds[0], userId: seeded.userIds[0], first: seeded.firstEventAt, last: seeded.lastEventAt } })}\n`,
);
