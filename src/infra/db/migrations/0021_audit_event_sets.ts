import { sql, type CreateTableBuilder } from 'kysely';
import { auditEventsMigration } from './0017_audit_events.js';
import { auditEventQueueMigration } from './0020_audit_event_queue.js';
import { atomically, text, ts, withId, type AnyDb, type MigrationDialect, type MigrationFactory } from './helpers.js';

/**
 * Audit events are stored by the set (src/modules/audit, docs/decisions.md "Audit events are stored
 * as one row per transaction and entity"): `audit_event_sets` holds a transaction's events about one
 * entity as one row of JSON text, up to 100, indexed by entity; event `n` of set `id` has the id
 * `id * 100 + n`. The `audit_events` table and the queue of migration 0020 go; `audit_events`
 * becomes a view with one row per event, for operators' SQL.
 *
 * Each existing event becomes a set of its own under its old id (so it is event `old id * 100`),
 * and each queued one a set after them. The text is written here by a frozen copy of the format
 * (every value under `shared`, one empty row), so this migration keeps meaning what it meant.
 */
export const auditEventSetsMigration: MigrationFactory = (dialect) => ({
  async up(db: AnyDb) {
    await atomically(db, async (trx) => {
      await createSets(trx, dialect);
      await moveEvents(trx);
      await carrySequence(trx, dialect);
      await moveQueue(trx);
      await trx.schema.dropTable('audit_events').execute();
      await trx.schema.dropTable('audit_event_queue').execute();
      await sql.raw(viewSql(dialect)).execute(trx);
    });
  },
  /** Back to 0020's tables, made by 0017's and 0020's own migrations, with every event under its id here. */
  async down(db: AnyDb) {
    await atomically(db, async (trx) => {
      await sql`create table audit_events_expanded as select * from audit_events`.execute(trx);
      await sql`drop view audit_events`.execute(trx);
      await trx.schema.dropTable('audit_event_sets').execute();
      await auditEventsMigration(dialect).up(trx);
      await sql`insert into audit_events select * from audit_events_expanded order by id`.execute(trx);
      await trx.schema.dropTable('audit_events_expanded').execute();
      if (dialect === 'postgres') {
        await sql`select setval(pg_get_serial_sequence('audit_events', 'id'), greatest((select max(id) from audit_events), 1))`.execute(
          trx,
        );
      }
      await auditEventQueueMigration(dialect).up(trx);
    });
  },
});

const COLUMNS = [
  'author_id',
  'author_name',
  'entity_type',
  'entity_id',
  'entity_path',
  'target_type',
  'target_id',
  'target_details',
  'event_name',
  'details',
  'ip_address',
  'created_at',
] as const;
const DETAILS = COLUMNS.indexOf('details');
const ENTITY_TYPE = COLUMNS.indexOf('entity_type');
const ENTITY_ID = COLUMNS.indexOf('entity_id');
const CREATED_AT = COLUMNS.indexOf('created_at');
/** Rows moved per statement pair. */
const CHUNK = 500;

async function createSets(trx: AnyDb, dialect: MigrationDialect): Promise<void> {
  await setsTable(trx, 'audit_event_sets', (table) => withId(table, dialect)).execute();
  await createSetsIndex(trx);
}

/** The sets table's shape under `name`, its id column added by `id` (migration 0022 rebuilds it on SQLite). */
export function setsTable(
  trx: AnyDb,
  name: string,
  id: (table: CreateTableBuilder<string>) => CreateTableBuilder<string, 'id'>,
): CreateTableBuilder<string, string> {
  return id(trx.schema.createTable(name))
    .addColumn('entity_type', text, (c) => c.notNull())
    .addColumn('entity_id', 'bigint', (c) => c.notNull())
    .addColumn('first_at', ts, (c) => c.notNull())
    .addColumn('last_at', ts, (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('events', text, (c) => c.notNull());
}

/** The sets' index by entity, newest last within one. */
export async function createSetsIndex(trx: AnyDb): Promise<void> {
  await trx.schema.createIndex('audit_event_sets_entity').on('audit_event_sets').columns(['entity_type', 'entity_id', 'id']).execute();
}

/** One event's values (details parsed) as a set of its own: every value shared, one empty row. */
function singleSet(values: readonly unknown[], id?: number) {
  const shared: Record<string, unknown> = {};
  values.forEach((value, column) => (shared[String(column)] = column === DETAILS ? parseDetails(value) : value));
  const at = Number(values[CREATED_AT]);
  return {
    ...(id === undefined ? {} : { id }),
    entity_type: String(values[ENTITY_TYPE]),
    entity_id: Number(values[ENTITY_ID]),
    first_at: at,
    last_at: at,
    event_count: 1,
    events: JSON.stringify({ shared, rows: [{}] }),
  };
}

function parseDetails(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return { text: value };
  }
}

async function moveEvents(trx: AnyDb): Promise<void> {
  for (let after = 0; ;) {
    const rows = (await trx.selectFrom('audit_events').selectAll().where('id', '>', after).orderBy('id').limit(CHUNK).execute()) as Record<
      string,
      unknown
    >[];
    if (rows.length === 0) return;
    await trx
      .insertInto('audit_event_sets')
      .values(
        rows.map((row) =>
          singleSet(
            COLUMNS.map((column) => row[column]),
            Number(row.id),
          ),
        ),
      )
      .execute();
    after = Number(rows[rows.length - 1]?.id);
  }
}

/** Queued events (migration 0020's format: shared values by column, each event's others in column order). */
async function moveQueue(trx: AnyDb): Promise<void> {
  const queued = (await trx.selectFrom('audit_event_queue').select(['id', 'events']).orderBy('id').execute()) as {
    events: string;
  }[];
  for (const { events } of queued) {
    const sets = decodeQueued(events).map((values) => singleSet(values));
    for (let at = 0; at < sets.length; at += CHUNK) {
      await trx
        .insertInto('audit_event_sets')
        .values(sets.slice(at, at + CHUNK))
        .execute();
    }
  }
}

function decodeQueued(text: string): unknown[][] {
  try {
    const { shared, rows } = JSON.parse(text) as { shared?: Record<string, unknown>; rows?: unknown[][] };
    if (typeof shared !== 'object' || shared === null || !Array.isArray(rows)) return [];
    return rows.map((own) => {
      let next = 0;
      return COLUMNS.map((_, column) => (String(column) in shared ? shared[String(column)] : own[next++]));
    });
  } catch {
    // A row 0020's writer could not decode either; it held nothing readable.
    return [];
  }
}

/** New sets take ids above every event id ever given, the deleted ones' included. */
async function carrySequence(trx: AnyDb, dialect: MigrationDialect): Promise<void> {
  if (dialect === 'sqlite') {
    const old = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'audit_events'`.execute(trx);
    const seq = old.rows[0]?.seq;
    if (seq === undefined) return;
    await sql`update sqlite_sequence set seq = max(seq, ${seq}) where name = 'audit_event_sets'`.execute(trx);
    await sql`insert into sqlite_sequence (name, seq) select 'audit_event_sets', ${seq} where not exists (select 1 from sqlite_sequence where name = 'audit_event_sets')`.execute(
      trx,
    );
    return;
  }
  const old = await sql<{ seq: string | null }>`select pg_get_serial_sequence('audit_events', 'id') as seq`.execute(trx);
  const oldSequence = old.rows[0]?.seq;
  const last = oldSequence ? await sql<{ v: string }>`select last_value as v from ${sql.raw(oldSequence)}`.execute(trx) : undefined;
  await sql`select setval(pg_get_serial_sequence('audit_event_sets', 'id'),
    greatest((select coalesce(max(id), 0) from audit_event_sets), ${Number(last?.rows[0]?.v ?? 0)}, 1))`.execute(trx);
}

/** One row per event: its set's id times 100 plus its place, each value from the row or the set's shared ones. */
export function viewSql(dialect: MigrationDialect): string {
  if (dialect === 'sqlite') {
    const value = (column: number) =>
      column === ENTITY_TYPE || column === ENTITY_ID
        ? `s.${COLUMNS[column]}`
        : column === DETAILS
          ? `coalesce(r.value -> '$."${column}"', s.events -> '$.shared."${column}"')`
          : `coalesce(r.value ->> '$."${column}"', s.events ->> '$.shared."${column}"')`;
    return `create view audit_events as select s.id * 100 + r.key as id, ${COLUMNS.map((name, i) => `${value(i)} as ${name}`).join(', ')}
      from audit_event_sets s, json_each(s.events, '$.rows') r`;
  }
  const cast: Partial<Record<(typeof COLUMNS)[number], string>> = { author_id: 'bigint', target_id: 'bigint', created_at: 'bigint' };
  const value = (column: number) => {
    const name = COLUMNS[column] as (typeof COLUMNS)[number];
    if (column === ENTITY_TYPE || column === ENTITY_ID) return `s.${name}`;
    const json = `coalesce(r.value -> '${column}', d.doc -> 'shared' -> '${column}')`;
    if (column === DETAILS) return `${json}::text`;
    return cast[name] ? `(${json} #>> '{}')::${cast[name]}` : `${json} #>> '{}'`;
  };
  return `create view audit_events as select s.id * 100 + (r.n - 1) as id, ${COLUMNS.map((name, i) => `${value(i)} as ${name}`).join(', ')}
    from audit_event_sets s
    cross join lateral (select s.events::jsonb as doc) d
    cross join lateral jsonb_array_elements(d.doc -> 'rows') with ordinality as r(value, n)`;
}
