import SQLite from 'better-sqlite3';
import pg from 'pg';
import { replaceNul } from '../infra/db/nul-plugin.js';

/**
 * Every table of a database, read and written generically (by what the database says its tables
 * and columns are), so a table added by a later migration is backed up and copied without
 * changes here. Kysely's migration bookkeeping is not data: the migrations recreate it.
 *
 * Values travel as JSON: text, null and integers. Basalt stores timestamps as epoch
 * milliseconds, booleans as 0/1 and counters in BIGINT on both dialects (migrations/helpers.ts),
 * so a value means the same on either side. Integers beyond 2^53 (error fingerprint keys use all
 * 64 bits) travel as decimal strings, which both databases store back as integers.
 */

export const BOOKKEEPING_TABLES = ['kysely_migration', 'kysely_migration_lock'] as const;

/** A row as the values of `TableInfo.columns`, in order. */
export type Row = unknown[];

export interface TableInfo {
  readonly name: string;
  readonly columns: readonly string[];
  /** Primary key columns, in key order (rows are read in this order). */
  readonly primaryKey: readonly string[];
  /** Tables this one refers to by foreign key (itself excluded). */
  readonly parents: readonly string[];
}

/** Where rows come from: a SQLite file, a PostgreSQL schema inside one snapshot, or a backup's files. */
export interface RowSource {
  tables(): Promise<TableInfo[]>;
  /** The table's rows in primary-key order, in batches. */
  rows(table: TableInfo): AsyncIterable<Row[]>;
  count(table: string): Promise<number>;
  /** The last id handed out per table, where the database keeps one (never below the largest id). */
  sequences(): Promise<Record<string, number>>;
  /** Applied migrations by name, sorted. */
  migrations(): Promise<string[]>;
  close(): Promise<void>;
}

/** Where rows go: an empty, migrated database, inside one transaction. */
export interface RowTarget {
  tables(): Promise<TableInfo[]>;
  begin(): Promise<void>;
  /** Deletes every row (migrations may seed some) so the copy is exactly the source's. */
  clear(tables: readonly TableInfo[]): Promise<void>;
  insert(table: TableInfo, columns: readonly string[], rows: readonly Row[]): Promise<void>;
  count(table: string): Promise<number>;
  /** Sets the table's id sequence so the next id is above `atLeast` and above every id present. */
  setSequence(table: TableInfo, atLeast: number): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): Promise<void>;
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Integers beyond 2^53 as decimal strings (see above); everything else as it is. */
function jsonValue(value: unknown): unknown {
  if (typeof value === 'bigint')
    return value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER ? Number(value) : value.toString();
  return value;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A decimal string of a 64-bit integer (see jsonValue) bound as one, so an INTEGER column stores
 * it exactly; a TEXT column turns it back into the same text.
 */
function sqliteValue(value: unknown): unknown {
  if (typeof value !== 'string' || !/^-?\d{16,19}$/.test(value)) return value;
  const n = BigInt(value);
  return n >= INT64_MIN && n <= INT64_MAX && n.toString() === value ? n : value;
}

/**
 * Parents before children, so foreign keys hold at every insert; rows within a table go in
 * primary-key order, which puts a self-referencing parent first in practice.
 */
export function inDependencyOrder(tables: readonly TableInfo[]): TableInfo[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: TableInfo[] = [];
  const visit = (table: TableInfo): void => {
    if (done.has(table.name) || visiting.has(table.name)) return;
    visiting.add(table.name);
    for (const parent of table.parents) {
      const found = byName.get(parent);
      if (found) visit(found);
    }
    visiting.delete(table.name);
    done.add(table.name);
    out.push(table);
  };
  for (const table of [...tables].sort((a, b) => a.name.localeCompare(b.name))) visit(table);
  return out;
}

const BATCH_ROWS = 1000;

// --- SQLite -------------------------------------------------------------------------------

function sqliteTables(sqlite: SQLite.Database): TableInfo[] {
  const names = sqlite
    .prepare(`select name from sqlite_schema where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name`)
    .pluck()
    .all() as string[];
  return names
    .filter((name) => !(BOOKKEEPING_TABLES as readonly string[]).includes(name))
    .map((name) => {
      const info = sqlite.prepare('select name, pk from pragma_table_info(?) order by cid').all(name) as { name: string; pk: number }[];
      const parents = sqlite.prepare('select distinct "table" as parent from pragma_foreign_key_list(?)').pluck().all(name) as string[];
      const primaryKey = info
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      return { name, columns: info.map((c) => c.name), primaryKey, parents: parents.filter((p) => p !== name) };
    });
}

function orderBy(table: TableInfo): string {
  return table.primaryKey.length > 0 ? ` order by ${table.primaryKey.map(quote).join(', ')}` : '';
}

/**
 * A SQLite file read inside one read transaction: in WAL mode a server may go on writing while
 * the rows read are those of one moment.
 */
export class SqliteSource implements RowSource {
  private readonly sqlite: SQLite.Database;

  constructor(file: string) {
    this.sqlite = new SQLite(file, { readonly: true, fileMustExist: true });
    this.sqlite.pragma('busy_timeout = 5000');
    this.sqlite.exec('begin');
    // A deferred transaction takes its snapshot at the first read.
    this.sqlite.prepare('select count(*) from sqlite_schema').get();
  }

  async tables(): Promise<TableInfo[]> {
    return sqliteTables(this.sqlite);
  }

  async *rows(table: TableInfo): AsyncIterable<Row[]> {
    const statement = this.sqlite
      .prepare(`select ${table.columns.map(quote).join(', ')} from ${quote(table.name)}${orderBy(table)}`)
      .raw(true)
      .safeIntegers(true);
    // A batch is read synchronously, then handed out: the consumer writes elsewhere meanwhile.
    const iterator = statement.iterate() as IterableIterator<unknown[]>;
    try {
      for (;;) {
        const batch: Row[] = [];
        let next = iterator.next();
        while (!next.done) {
          batch.push(next.value.map(jsonValue));
          if (batch.length >= BATCH_ROWS) break;
          next = iterator.next();
        }
        if (batch.length > 0) yield batch;
        if (next.done) return;
      }
    } finally {
      iterator.return?.();
    }
  }

  async count(table: string): Promise<number> {
    return Number(
      this.sqlite
        .prepare(`select count(*) from ${quote(table)}`)
        .pluck()
        .get(),
    );
  }

  async sequences(): Promise<Record<string, number>> {
    const exists = this.sqlite.prepare(`select 1 from sqlite_schema where name = 'sqlite_sequence'`).get();
    if (!exists) return {};
    const rows = this.sqlite.prepare('select name, seq from sqlite_sequence').all() as { name: string; seq: number }[];
    return Object.fromEntries(rows.map((r) => [r.name, Number(r.seq)]));
  }

  async migrations(): Promise<string[]> {
    const exists = this.sqlite.prepare(`select 1 from sqlite_schema where name = 'kysely_migration'`).get();
    if (!exists) return [];
    return this.sqlite.prepare('select name from kysely_migration order by name').pluck().all() as string[];
  }

  async close(): Promise<void> {
    if (this.sqlite.inTransaction) this.sqlite.exec('commit');
    this.sqlite.close();
  }
}

/** A migrated SQLite file written in one transaction. */
export class SqliteTarget implements RowTarget {
  private readonly sqlite: SQLite.Database;

  constructor(file: string) {
    this.sqlite = new SQLite(file, { fileMustExist: true });
    this.sqlite.pragma('foreign_keys = ON');
  }

  async tables(): Promise<TableInfo[]> {
    return sqliteTables(this.sqlite);
  }

  async begin(): Promise<void> {
    this.sqlite.exec('begin immediate');
  }

  async clear(tables: readonly TableInfo[]): Promise<void> {
    for (const table of [...inDependencyOrder(tables)].reverse()) this.sqlite.prepare(`delete from ${quote(table.name)}`).run();
  }

  async insert(table: TableInfo, columns: readonly string[], rows: readonly Row[]): Promise<void> {
    const statement = this.sqlite.prepare(
      `insert into ${quote(table.name)} (${columns.map(quote).join(', ')}) values (${columns.map(() => '?').join(', ')})`,
    );
    for (const row of rows) statement.run(row.map(sqliteValue));
  }

  async count(table: string): Promise<number> {
    return Number(
      this.sqlite
        .prepare(`select count(*) from ${quote(table)}`)
        .pluck()
        .get(),
    );
  }

  async setSequence(table: TableInfo, atLeast: number): Promise<void> {
    // Inserting explicit ids already moved an AUTOINCREMENT sequence to the largest; only a
    // higher recorded value (rows deleted at the end) needs writing.
    const has = this.sqlite.prepare('select seq from sqlite_sequence where name = ?').pluck().get(table.name) as number | undefined;
    if (has === undefined) {
      const autoincrement = this.sqlite
        .prepare(`select 1 from sqlite_schema where name = ? and sql like '%autoincrement%'`)
        .get(table.name);
      if (autoincrement && atLeast > 0)
        this.sqlite.prepare('insert into sqlite_sequence (name, seq) values (?, ?)').run(table.name, atLeast);
    } else if (Number(has) < atLeast) {
      this.sqlite.prepare('update sqlite_sequence set seq = ? where name = ?').run(atLeast, table.name);
    }
  }

  async commit(): Promise<void> {
    this.sqlite.exec('commit');
  }

  async rollback(): Promise<void> {
    if (this.sqlite.inTransaction) this.sqlite.exec('rollback');
  }

  async close(): Promise<void> {
    this.sqlite.close();
  }
}

// --- PostgreSQL ---------------------------------------------------------------------------

const INT8 = 20;

/**
 * A client of its own that reads BIGINT as text: the server's pool reads it as a number
 * (database.ts), which would round 64-bit keys.
 */
export async function connectPostgres(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
        oid === INT8 ? (value: string) => value : (pg.types.getTypeParser(oid, format) as unknown)) as typeof pg.types.getTypeParser,
    },
  });
  await client.connect();
  return client;
}

/** The schema the connection's `search_path` selects (DATABASE_URL's `options=-c search_path=…`). */
export async function currentSchema(client: pg.Client): Promise<string> {
  const row = (await client.query<{ schema: string | null }>('select current_schema() as schema')).rows[0];
  if (!row?.schema) throw new Error('the PostgreSQL connection has no current schema (check search_path)');
  return row.schema;
}

/** Names of the schema's tables, bookkeeping included. */
export async function postgresTableNames(client: pg.Client): Promise<string[]> {
  const result = await client.query<{ name: string }>(
    `select table_name as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`,
  );
  return result.rows.map((r) => r.name);
}

async function postgresTables(client: pg.Client): Promise<TableInfo[]> {
  const names = (await postgresTableNames(client)).filter((n) => !(BOOKKEEPING_TABLES as readonly string[]).includes(n));
  const columns = await client.query<{ table: string; column: string }>(
    `select table_name as "table", column_name as "column" from information_schema.columns
      where table_schema = current_schema() order by table_name, ordinal_position`,
  );
  const keys = await client.query<{ table: string; column: string }>(
    `select c.relname as "table", a.attname as "column"
       from pg_index i
       join pg_class c on c.oid = i.indrelid
       join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
       cross join lateral unnest(i.indkey) with ordinality as k(attnum, position)
       join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
      where i.indisprimary order by c.relname, k.position`,
  );
  const parents = await client.query<{ table: string; parent: string }>(
    `select distinct c.relname as "table", p.relname as parent
       from pg_constraint f
       join pg_class c on c.oid = f.conrelid
       join pg_class p on p.oid = f.confrelid
       join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
      where f.contype = 'f'`,
  );
  return names.map((name) => ({
    name,
    columns: columns.rows.filter((r) => r.table === name).map((r) => r.column),
    primaryKey: keys.rows.filter((r) => r.table === name).map((r) => r.column),
    parents: parents.rows.filter((r) => r.table === name && r.parent !== name).map((r) => r.parent),
  }));
}

/** int8 text to a number when it fits a double exactly (see jsonValue). */
function pgValue(value: unknown): unknown {
  if (typeof value === 'string' && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  return value;
}

/**
 * A PostgreSQL schema read inside one REPEATABLE READ READ ONLY transaction: every table as of
 * the same moment, while the server goes on writing.
 */
export class PostgresSource implements RowSource {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<PostgresSource> {
    const client = await connectPostgres(url);
    await client.query('begin isolation level repeatable read read only');
    // The snapshot is taken at the first statement.
    await client.query('select 1');
    return new PostgresSource(client);
  }

  tables(): Promise<TableInfo[]> {
    return postgresTables(this.client);
  }

  async *rows(table: TableInfo): AsyncIterable<Row[]> {
    const cursor = `basalt_copy_${table.name}`.slice(0, 60);
    await this.client.query(
      `declare ${quote(cursor)} no scroll cursor for select ${table.columns.map(quote).join(', ')} from ${quote(table.name)}${orderBy(table)}`,
    );
    // int8 columns come as text (connectPostgres); only those turn into numbers.
    for (;;) {
      const result = await this.client.query<Row>({ text: `fetch ${BATCH_ROWS} from ${quote(cursor)}`, rowMode: 'array' });
      if (result.rows.length === 0) break;
      const int8 = result.fields.map((f) => f.dataTypeID === INT8);
      yield result.rows.map((row) => row.map((v, i) => (int8[i] ? pgValue(v) : v)));
      if (result.rows.length < BATCH_ROWS) break;
    }
    await this.client.query(`close ${quote(cursor)}`);
  }

  async count(table: string): Promise<number> {
    const result = await this.client.query<{ n: string }>(`select count(*) as n from ${quote(table)}`);
    return Number(result.rows[0]?.n ?? 0);
  }

  async sequences(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    const identities = await this.client.query<{ table: string; column: string }>(
      `select table_name as "table", column_name as "column" from information_schema.columns
        where table_schema = current_schema() and (is_identity = 'YES' or column_default like 'nextval(%')`,
    );
    for (const { table, column } of identities.rows) {
      const seq = await this.client.query<{ name: string | null }>('select pg_get_serial_sequence($1, $2) as name', [quote(table), column]);
      const name = seq.rows[0]?.name;
      if (!name) continue;
      const value = await this.client.query<{ last_value: string; is_called: boolean }>(`select last_value, is_called from ${name}`);
      const row = value.rows[0];
      if (row) out[table] = Number(row.last_value) - (row.is_called ? 0 : 1);
    }
    return out;
  }

  async migrations(): Promise<string[]> {
    const names = await postgresTableNames(this.client);
    if (!names.includes('kysely_migration')) return [];
    return (await this.client.query<{ name: string }>('select name from kysely_migration order by name')).rows.map((r) => r.name);
  }

  async close(): Promise<void> {
    await this.client.query('commit').catch(() => undefined);
    await this.client.end();
  }
}

/** A migrated PostgreSQL schema written in one transaction. */
export class PostgresTarget implements RowTarget {
  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<PostgresTarget> {
    return new PostgresTarget(await connectPostgres(url));
  }

  tables(): Promise<TableInfo[]> {
    return postgresTables(this.client);
  }

  async begin(): Promise<void> {
    await this.client.query('begin');
  }

  async clear(tables: readonly TableInfo[]): Promise<void> {
    if (tables.length === 0) return;
    await this.client.query(`truncate ${tables.map((t) => quote(t.name)).join(', ')}`);
  }

  async insert(table: TableInfo, columns: readonly string[], rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return;
    // One JSON parameter per batch, spread into the table's own row type: PostgreSQL converts
    // each value by its column's type, and no statement nears the 65,535-parameter limit. A
    // statement of a placeholder per value made the copy of 1.4M rows take a fifth longer.
    const list = columns.map(quote).join(', ');
    const records = rows.map((row) => {
      const record: Record<string, unknown> = {};
      columns.forEach((column, i) => (record[column] = replaceNul(row[i])));
      return record;
    });
    await this.client.query(
      `insert into ${quote(table.name)} (${list}) overriding system value select ${list} from json_populate_recordset(null::${quote(table.name)}, $1::json)`,
      [JSON.stringify(records)],
    );
  }

  async count(table: string): Promise<number> {
    const result = await this.client.query<{ n: string }>(`select count(*) as n from ${quote(table)}`);
    return Number(result.rows[0]?.n ?? 0);
  }

  async setSequence(table: TableInfo, atLeast: number): Promise<void> {
    for (const column of table.columns) {
      const seq = await this.client.query<{ name: string | null }>('select pg_get_serial_sequence($1, $2) as name', [
        quote(table.name),
        column,
      ]);
      const name = seq.rows[0]?.name;
      if (!name) continue;
      const max = await this.client.query<{ max: string | null }>(`select max(${quote(column)}) as max from ${quote(table.name)}`);
      const value = Math.max(atLeast, Number(max.rows[0]?.max ?? 0));
      // setval(…, false) makes the next id the value itself: 1 for a table that never had a row.
      if (value > 0) await this.client.query('select setval($1, $2, true)', [name, value]);
      else await this.client.query('select setval($1, 1, false)', [name]);
    }
  }

  async commit(): Promise<void> {
    await this.client.query('commit');
  }

  async rollback(): Promise<void> {
    await this.client.query('rollback').catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

export interface CopyReport {
  /** Rows per table, as read from the source and verified on the target. */
  readonly counts: Record<string, number>;
}

/**
 * Copies every table of `source` into `target` (migrated to the same level beforehand) in one
 * transaction: parents first, batches of rows, sequences past the largest id, then the row
 * count of every table compared before the commit. Any difference rolls everything back.
 */
export async function copyTables(source: RowSource, target: RowTarget, progress: (line: string) => void): Promise<CopyReport> {
  const sourceTables = await source.tables();
  const targetTables = new Map((await target.tables()).map((t) => [t.name, t]));
  const missing = sourceTables.filter((t) => !targetTables.has(t.name)).map((t) => t.name);
  if (missing.length > 0)
    throw new Error(`the target lacks tables the source has: ${missing.join(', ')} (is it migrated to the same level?)`);
  const extra = [...targetTables.keys()].filter((name) => !sourceTables.some((t) => t.name === name));
  if (extra.length > 0) throw new Error(`the target has tables the source lacks: ${extra.join(', ')} (is it migrated to the same level?)`);
  const ordered = inDependencyOrder(sourceTables.map((t) => ({ ...t, parents: targetTables.get(t.name)?.parents ?? t.parents })));
  const sequences = await source.sequences();
  const counts: Record<string, number> = {};
  await target.begin();
  try {
    await target.clear(ordered);
    for (const table of ordered) {
      const into = targetTables.get(table.name) as TableInfo;
      const absent = table.columns.filter((c) => !into.columns.includes(c));
      if (absent.length > 0) throw new Error(`table ${table.name}: the target lacks columns ${absent.join(', ')}`);
      let copied = 0;
      let reported = Date.now();
      for await (const batch of source.rows(table)) {
        await target.insert(into, table.columns, batch);
        copied += batch.length;
        if (Date.now() - reported > 2000) {
          progress(`${table.name}: ${copied} rows`);
          reported = Date.now();
        }
      }
      counts[table.name] = copied;
      await target.setSequence(into, sequences[table.name] ?? 0);
    }
    for (const table of ordered) {
      const expected = await source.count(table.name);
      const found = await target.count(table.name);
      if (expected !== counts[table.name] || found !== expected) {
        throw new Error(`table ${table.name}: ${expected} rows in the source, ${found} after the copy`);
      }
    }
    await target.commit();
  } catch (error) {
    await target.rollback();
    throw error;
  }
  return { counts };
}
