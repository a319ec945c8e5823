import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { atomically, type AnyDb, type MigrationFactory } from './helpers.js';

/**
 * Open alerts are found by a 64-bit integer key of their fingerprint instead of the 40 hex
 * digits, as errors are since 0011 (docs/decisions.md "Alerts"): every new fingerprint writes
 * an entry of the partial unique index at a random place, and an integer entry is a third of
 * the text one. The text fingerprint stays in the row; alerts without one have no key (NULLs
 * never collide in a unique index). The index is a plain one on both dialects, so no table
 * is rebuilt.
 */
export const alertFingerprintKeysMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await atomically(db, async (trx) => {
      await sql`alter table alerts add column fingerprint_key ${sql.raw(dialect === 'postgres' ? 'bigint' : 'integer')}`.execute(trx);
      await backfillKeys(trx);
      await sql`drop index alerts_open_fingerprint`.execute(trx);
      await sql`create unique index alerts_open_fingerprint_key on alerts (project_id, fingerprint_key) where status <> 'resolved'`.execute(
        trx,
      );
    });
  },
  async down(db: AnyDb) {
    await atomically(db, async (trx) => {
      await sql`drop index alerts_open_fingerprint_key`.execute(trx);
      await sql`create unique index alerts_open_fingerprint on alerts (project_id, fingerprint) where status <> 'resolved'`.execute(trx);
      await sql`alter table alerts drop column fingerprint_key`.execute(trx);
    });
  },
});

/**
 * The key of a fingerprint: its first 64 bits as a signed integer. Fingerprints are SHA-1 hex
 * (modules/alerts/normalize.common.ts); anything else is keyed by its own SHA-1. Restated
 * here, not imported: a migration keeps meaning what it meant when it shipped.
 */
function fingerprintKey(fingerprint: string): bigint {
  const hex = /^[0-9a-f]{40}$/.test(fingerprint) ? fingerprint : createHash('sha1').update(fingerprint).digest('hex');
  return BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`));
}

const BATCH = 1000;

async function backfillKeys(trx: AnyDb): Promise<void> {
  for (let after = 0; ;) {
    const rows = await sql<{ id: number; fingerprint: string }>`
      select id, fingerprint from alerts where id > ${after} and fingerprint is not null order by id limit ${BATCH}`.execute(trx);
    for (const row of rows.rows) {
      await sql`update alerts set fingerprint_key = ${fingerprintKey(row.fingerprint)} where id = ${row.id}`.execute(trx);
    }
    const last = rows.rows[rows.rows.length - 1];
    if (!last || rows.rows.length < BATCH) return;
    after = Number(last.id);
  }
}
