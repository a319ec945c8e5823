import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { atomically, rebuildSqliteTable, text, ts, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * Errors are found by a 64-bit integer key of their fingerprint instead of the 40 hex digits
 * (docs/decisions.md "Error tracking"): every new error writes an entry of its unique index at
 * a random place, and an integer entry is a third of the text one, so the index stays smaller,
 * splits less and a new error's upsert costs about a third less (docs/perf-lab.md). The text
 * fingerprint stays in the row. SQLite cannot drop a table constraint, so there the table is
 * rebuilt; the events table refers to it, so foreign keys are off around the rebuild (SQLite's
 * documented procedure: with them on, dropping the old table would delete every event) and
 * checked before the rebuild commits.
 */
export const errorFingerprintKeysMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    if (dialect === 'postgres') {
      await atomically(db, async (trx) => {
        await sql`alter table error_tracking_errors add column fingerprint_key bigint`.execute(trx);
        await backfillKeys(trx);
        await sql`alter table error_tracking_errors alter column fingerprint_key set not null`.execute(trx);
        await sql`alter table error_tracking_errors drop constraint et_errors_project_fingerprint`.execute(trx);
        await createKeyIndex(trx);
      });
      return;
    }
    await withoutForeignKeys(db, async (trx) => {
      await sql`alter table error_tracking_errors add column fingerprint_key integer`.execute(trx);
      await backfillKeys(trx);
      await rebuildErrors(trx, 'keyed');
      await createKeyIndex(trx);
    });
  },
  async down(db: AnyDb) {
    if (dialect === 'postgres') {
      await atomically(db, async (trx) => {
        await sql`drop index et_errors_project_fingerprint_key`.execute(trx);
        await sql`alter table error_tracking_errors add constraint et_errors_project_fingerprint unique (project_id, fingerprint)`.execute(
          trx,
        );
        await sql`alter table error_tracking_errors drop column fingerprint_key`.execute(trx);
      });
      return;
    }
    await withoutForeignKeys(db, async (trx) => {
      await rebuildErrors(trx, 'by text');
    });
  },
});

/**
 * The key of a fingerprint: its first 64 bits as a signed integer. Fingerprints are SHA-1 hex
 * (modules/error-tracking/event.rules.ts); anything else (never written by the application) is keyed
 * by its own SHA-1 so keys stay distinct. Restated here, not imported: a migration keeps
 * meaning what it meant when it shipped.
 */
function fingerprintKey(fingerprint: string): bigint {
  const hex = /^[0-9a-f]{40}$/.test(fingerprint) ? fingerprint : createHash('sha1').update(fingerprint).digest('hex');
  return BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`));
}

const BATCH = 1000;

async function backfillKeys(trx: AnyDb): Promise<void> {
  for (let after = 0; ;) {
    const rows = await sql<{ id: number; fingerprint: string }>`
      select id, fingerprint from error_tracking_errors where id > ${after} order by id limit ${BATCH}`.execute(trx);
    for (const row of rows.rows) {
      await sql`update error_tracking_errors set fingerprint_key = ${fingerprintKey(row.fingerprint)} where id = ${row.id}`.execute(trx);
    }
    const last = rows.rows[rows.rows.length - 1];
    if (!last || rows.rows.length < BATCH) return;
    after = Number(last.id);
  }
}

function createKeyIndex(trx: AnyDb) {
  return sql`create unique index et_errors_project_fingerprint_key on error_tracking_errors (project_id, fingerprint_key)`.execute(trx);
}

/** PRAGMA foreign_keys cannot change inside a transaction: it is set around it, and restored. */
async function withoutForeignKeys(db: AnyDb, work: (trx: AnyDb) => Promise<void>): Promise<void> {
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await atomically(db, async (trx) => {
      await work(trx);
      const broken = await sql`pragma foreign_key_check`.execute(trx);
      if (broken.rows.length > 0) throw new Error(`error_tracking_errors rebuild would break ${broken.rows.length} references`);
    });
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}

/** The errors table as 0005 made it, with the integer key and its own index ('keyed') or without ('by text'). */
async function rebuildErrors(trx: AnyDb, shape: 'keyed' | 'by text'): Promise<void> {
  await rebuildSqliteTable(trx, 'error_tracking_errors', (name) => {
    const table = trx.schema
      .createTable(name)
      .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
      .addColumn('fingerprint', text, (c) => c.notNull())
      .addColumn('title', text, (c) => c.notNull())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('description', text, (c) => c.notNull())
      .addColumn('culprit', text, (c) => c.notNull())
      .addColumn('platform', text, (c) => c.notNull())
      .addColumn('status', text, (c) => c.notNull().defaultTo('unresolved'))
      .addColumn('events_count', 'bigint', (c) => c.notNull())
      .addColumn('first_seen_at', ts, (c) => c.notNull())
      .addColumn('last_seen_at', ts, (c) => c.notNull())
      .addColumn('issue_iid', 'bigint')
      .addColumn('created_at', ts, (c) => c.notNull())
      .addColumn('updated_at', ts, (c) => c.notNull());
    return shape === 'keyed'
      ? table.addColumn('fingerprint_key', 'integer', (c) => c.notNull())
      : table.addUniqueConstraint('et_errors_project_fingerprint', ['project_id', 'fingerprint']);
  });
  await trx.schema.createIndex('et_errors_list').on('error_tracking_errors').columns(['project_id', 'status', 'last_seen_at']).execute();
}
