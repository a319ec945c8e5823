// What reading the audit trail costs when it is large (issue 24; docs/performance.md "Audit"):
// seeds N events over a year into a fresh SQLite database (or DATABASE_URL's), half as sets of 30
// (token creations sharing commits) and half as sets of one, about 200 users and the instance,
// then times each list the API serves: the first page and its count, a deep page, one user's
// events, a time range, one event by id.
//
//   npx tsx bench/audit-reads.ts [--events 1000000]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { auditEntry, type AuditEntry } from '../src/infra/audit.js';
import { migrateToLatest, openDatabase } from '../src/infra/db/index.js';
import { AuditRepository, type AuditFilter } from '../src/modules/audit/audit.repository.js';

const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const EVENTS = argument('events', 1_000_000);
const USERS = 200;
const YEAR = 365 * 86_400_000;
const until = Date.UTC(2026, 10, 1);
const since = until - YEAR;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-audit-reads-'));
const database = openDatabase({
  databaseUrl: process.env.DATABASE_URL ?? null,
  sqliteFile: path.join(dataDir, 'audit.sqlite3'),
  schema: null,
});
await migrateToLatest(database.db, database.dialect);

const entryAt = (user: number, n: number, at: number): AuditEntry =>
  auditEntry(
    { authorId: user, authorName: `user${user}`, ipAddress: '192.0.2.1' },
    {
      entityType: user === 0 ? 'Gitlab::Audit::InstanceScope' : 'User',
      entityId: user === 0 ? 1 : user,
      entityPath: user === 0 ? null : `user${user}`,
      targetType: 'PersonalAccessToken',
      targetId: n,
      targetDetails: `token ${n}`,
      eventName: 'personal_access_token_created',
      details: { scopes: ['api'], expires_at: '2027-01-01' },
      at,
    },
  );

// Events in time order: a commit of 30 by one user, then 30 commits of one each, and so on.
const seedStart = performance.now();
for (let n = 0; n < EVENTS;) {
  await database.db.transaction().execute(async (trx) => {
    for (let commit = 0; commit < 200 && n < EVENTS; commit += 1) {
      const shared = Math.floor(n / 30) % 2 === 0;
      const size = Math.min(30, EVENTS - n);
      const at = since + Math.floor((n / EVENTS) * YEAR);
      if (shared) {
        const user = (n % USERS) + 1;
        await AuditRepository.store(
          trx,
          Array.from({ length: size }, (_, i) => entryAt(user, n + i, at + i)),
        );
      } else {
        for (let i = 0; i < size; i += 1) await AuditRepository.store(trx, [entryAt((n + i) % (USERS + 1), n + i, at + i)]);
      }
      n += size;
    }
  });
}
process.stdout.write(`seeded ${EVENTS} events in ${((performance.now() - seedStart) / 1000).toFixed(1)} s\n`);

const events = new AuditRepository(database.db);
async function timed(title: string, work: () => Promise<unknown>): Promise<void> {
  await work();
  const runs = 5;
  const start = performance.now();
  for (let i = 0; i < runs; i += 1) await work();
  process.stdout.write(`${title}: ${((performance.now() - start) / runs).toFixed(1)} ms\n`);
}
const listed = (filter: AuditFilter, limit: number, offset: number) => () =>
  Promise.all([events.page(filter, limit, offset), events.count(filter)]);

await timed('newest 20 and the count', listed({}, 20, 0));
await timed('page 500 of 20 (offset 10,000) and the count', listed({}, 20, 10_000));
await timed('one user: newest 20 and the count', listed({ entityType: 'User', entityId: 7 }, 20, 0));
await timed(
  'one day a month ago: newest 20 and the count',
  listed({ createdAfter: until - 31 * 86_400_000, createdBefore: until - 30 * 86_400_000 }, 20, 0),
);
await timed(
  'one user, one month: newest 20 and the count',
  listed({ entityType: 'User', entityId: 7, createdAfter: until - 60 * 86_400_000, createdBefore: until - 30 * 86_400_000 }, 20, 0),
);
const some = (await events.page({}, 1, EVENTS / 2))[0];
if (some) await timed('one event by id', () => events.findById(some.id));
await database.close();
rmSync(dataDir, { recursive: true, force: true });
