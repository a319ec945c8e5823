// Seeds activity events in bulk for the events benchmark (issue 7): users, one group of
// projects and N events spread over a year, ids growing with created_at as in real life.
// Rows go straight into the tables with multi-row inserts, many per transaction.
//
//   npx tsx bench/events-seed.ts [--events 1000000] [--explain]     (SQLite in a temp dir)
//   DATABASE_URL=postgres://... npx tsx bench/events-seed.ts --explain
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { migrateToLatest, openDatabase, type Database, type Dialect } from '../src/infra/db/index.js';
import type { DB } from '../src/infra/db/schema.js';
import { EventsRepository } from '../src/modules/events/events.repository.js';

export interface SeedOptions {
  events?: number;
  projects?: number;
  users?: number;
  /** Events are spread over this many days before `until`. */
  days?: number;
  until?: number;
  /** Rows per INSERT statement and statements per transaction. */
  batch?: number;
  perTransaction?: number;
}

export interface Seeded {
  userIds: number[];
  projectIds: number[];
  firstEventAt: number;
  lastEventAt: number;
}

const ACTION_MIX = [
  { action: 5, targetType: null }, // pushed (with a payload)
  { action: 5, targetType: null },
  { action: 5, targetType: null },
  { action: 1, targetType: 'Issue' },
  { action: 3, targetType: 'Issue' },
  { action: 6, targetType: 'Note' },
  { action: 8, targetType: null },
  { action: 1, targetType: null },
] as const;

/** A tiny deterministic PRNG so every run seeds the same data. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function inBatches<T>(
  db: Database,
  rows: number,
  batch: number,
  perTx: number,
  make: (from: number, to: number) => T[],
  write: (trx: Kysely<DB>, values: T[]) => Promise<void>,
) {
  for (let txStart = 0; txStart < rows; txStart += batch * perTx) {
    await db.transaction().execute(async (trx) => {
      for (let from = txStart; from < Math.min(rows, txStart + batch * perTx); from += batch) {
        await write(trx, make(from, Math.min(rows, from + batch)));
      }
    });
  }
}

/** Seeds users, projects and events; returns their ids. Expects a migrated, empty database. */
export async function seedEvents(db: Database, dialect: Dialect, options: SeedOptions = {}): Promise<Seeded> {
  const total = options.events ?? 1_000_000;
  const projectCount = options.projects ?? 1_000;
  const userCount = options.users ?? 10_000;
  const until = options.until ?? Date.UTC(2026, 0, 1);
  const span = (options.days ?? 365) * 86_400_000;
  const batch = options.batch ?? 1_000;
  const perTx = options.perTransaction ?? 50;
  const random = mulberry32(7);
  const now = until;

  const firstUser =
    (
      await db
        .selectFrom('users')
        .select((eb) => eb.fn.max('id').as('m'))
        .executeTakeFirst()
    )?.m ?? 0;
  await inBatches(
    db,
    userCount,
    batch,
    perTx,
    (from, to) =>
      Array.from({ length: to - from }, (_, i) => {
        const n = `seed${from + i}`;
        return {
          username: n,
          username_lower: n,
          name: n,
          email: `${n}@example.com`,
          email_lower: `${n}@example.com`,
          password_hash: null,
          confirmed_at: now,
          created_at: now,
          updated_at: now,
        };
      }),
    async (trx, values) => {
      await trx.insertInto('users').values(values).execute();
    },
  );
  const userIds = (await db.selectFrom('users').select('id').where('id', '>', Number(firstUser)).orderBy('id').execute()).map((r) => r.id);

  const group = await db
    .insertInto('namespaces')
    .values({
      kind: 'group',
      name: 'seed',
      path: 'seed',
      full_path: 'seed',
      full_path_lower: 'seed',
      parent_id: null,
      owner_id: null,
      visibility: 'public',
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await inBatches(
    db,
    projectCount,
    batch,
    perTx,
    (from, to) =>
      Array.from({ length: to - from }, (_, i) => {
        const p = `p${from + i}`;
        return {
          namespace_id: group.id,
          name: p,
          path: p,
          full_path: `seed/${p}`,
          full_path_lower: `seed/${p}`,
          visibility: 'public',
          repository_storage: 'default',
          last_activity_at: now,
          created_at: now,
          updated_at: now,
        };
      }),
    async (trx, values) => {
      await trx.insertInto('projects').values(values).execute();
    },
  );
  const projectIds = (await db.selectFrom('projects').select('id').where('namespace_id', '=', group.id).orderBy('id').execute()).map(
    (r) => r.id,
  );
  // The first user is a Developer of the group, so of every project in it: the dashboard's
  // member lists and activity (the events-dashboard scenario) span all of them.
  const firstUserId = userIds[0];
  if (firstUserId !== undefined)
    await db
      .insertInto('members')
      .values({
        source_kind: 'namespace',
        source_id: group.id,
        user_id: firstUserId,
        access_level: 30,
        created_by_id: null,
        expires_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();

  const firstEvent =
    Number(
      (
        await db
          .selectFrom('events')
          .select((eb) => eb.fn.max('id').as('m'))
          .executeTakeFirst()
      )?.m ?? 0,
    ) + 1;
  const start = until - span;
  const step = span / total;
  await inBatches(
    db,
    total,
    batch,
    perTx,
    (from, to) =>
      Array.from({ length: to - from }, (_, i) => {
        const n = from + i;
        const kind = ACTION_MIX[Math.floor(random() * ACTION_MIX.length)] ?? ACTION_MIX[0];
        return {
          id: firstEvent + n,
          project_id: projectIds[Math.floor(random() * projectIds.length)] ?? 0,
          author_id: userIds[Math.floor(random() * userIds.length)] ?? 0,
          action: kind.action,
          target_type: kind.targetType,
          target_id: kind.targetType ? 1 + Math.floor(random() * 1_000_000) : null,
          created_at: Math.floor(start + n * step),
        };
      }),
    async (trx, values) => {
      await trx.insertInto('events').values(values).execute();
      const pushes = values.filter((v) => v.action === 5);
      if (pushes.length)
        await trx
          .insertInto('push_event_payloads')
          .values(
            pushes.map((v) => ({
              event_id: v.id,
              commit_count: 1,
              action: 'pushed' as const,
              ref_type: 'branch' as const,
              commit_from: 'a'.repeat(40),
              commit_to: 'b'.repeat(40),
              ref: 'main',
              commit_title: 'Seeded commit',
              ref_count: null,
            })),
          )
          .execute();
    },
  );
  if (dialect === 'postgres') {
    await sql`select setval(pg_get_serial_sequence('events', 'id'), (select max(id) from events))`.execute(db);
    await sql`analyze`.execute(db);
  } else {
    await sql`analyze`.execute(db);
  }
  return { userIds, projectIds, firstEventAt: start, lastEventAt: Math.floor(start + (total - 1) * step) };
}

/** The plan of each query the two benchmarked lists run, as the database prints it. */
export async function explainEventLists(db: Database, dialect: Dialect, seeded: Seeded): Promise<Record<string, string[]>> {
  // Nested builders pass through transformQuery too (and never reach transformResult), and
  // queries built from one builder share its queryId: keep a queue per id, take what ran.
  const compiled = new Map<unknown, CompiledQuery[]>();
  const captured: CompiledQuery[] = [];
  const spy = db.withPlugin({
    transformQuery: (args) => {
      const queue = compiled.get(args.queryId) ?? [];
      queue.push(db.getExecutor().compileQuery(args.node, args.queryId));
      compiled.set(args.queryId, queue);
      return args.node;
    },
    transformResult: (args) => {
      const query = compiled.get(args.queryId)?.shift();
      if (query) captured.push(query);
      return Promise.resolve(args.result);
    },
  });
  const repo = new EventsRepository(spy);
  const day = 86_400_000;
  const mid = seeded.lastEventAt - 30 * day;
  const filter = { sort: 'desc' as const, createdFrom: mid - 60 * day, createdBefore: mid };
  const scope = { unrestricted: false, visibilities: ['public', 'internal'], namespaceIds: [], projectIds: [] };
  const cases: Record<string, () => Promise<unknown>> = {
    'GET /projects/:id/events?per_page=100 with after/before': () =>
      repo.page({ kind: 'project', projectId: seeded.projectIds[0] ?? 1 }, filter, 100, 0),
    'GET /projects/:id/events?per_page=100': () =>
      repo.page({ kind: 'project', projectId: seeded.projectIds[0] ?? 1 }, { sort: 'desc' }, 100, 0),
    'GET /users/:id/events with after/before': () => repo.page({ kind: 'author', authorId: seeded.userIds[0] ?? 1, scope }, filter, 20, 0),
    'GET /users/:id/events': () => repo.page({ kind: 'author', authorId: seeded.userIds[0] ?? 1, scope }, { sort: 'desc' }, 20, 0),
  };
  const out: Record<string, string[]> = {};
  for (const [name, run] of Object.entries(cases)) {
    captured.length = 0;
    await run();
    const lines: string[] = [];
    for (const q of [...captured]) {
      const prefix = dialect === 'postgres' ? 'explain ' : 'explain query plan ';
      const result = await db.executeQuery(CompiledQuery.raw(prefix + q.sql, [...q.parameters]));
      lines.push(
        `-- ${q.sql}`,
        ...result.rows.map((r) =>
          Object.values(r as Record<string, unknown>)
            .filter((v) => typeof v === 'string')
            .join(' '),
        ),
      );
    }
    out[name] = lines;
  }
  return out;
}

// Run directly: seed a fresh database, print the time it took and the plans.
if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const databaseUrl = process.env.DATABASE_URL ?? null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-events-seed-'));
  const handle = openDatabase({ databaseUrl, sqliteFile: path.join(dir, 'seed.sqlite3'), schema: process.env.DATABASE_SCHEMA ?? null });
  await migrateToLatest(handle.db, handle.dialect);
  const began = performance.now();
  const seeded = await seedEvents(handle.db, handle.dialect, { events: Number(arg('--events') ?? 1_000_000) });
  console.log(`seeded ${arg('--events') ?? 1_000_000} events on ${handle.dialect} in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  if (process.argv.includes('--explain')) {
    for (const [name, lines] of Object.entries(await explainEventLists(handle.db, handle.dialect, seeded))) {
      console.log(`\n## ${name}\n${lines.join('\n')}`);
    }
  }
  await handle.close();
}
