// Frozen helpers for migrations: they never import application types, so an old
// migration keeps meaning what it meant when it shipped.
import { sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, type Migration } from 'kysely';

export type MigrationDialect = 'sqlite' | 'postgres';
// Migrations run against a schema that is still being built, so they use an untyped handle.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDb = Kysely<any>;
export type MigrationFactory = (dialect: MigrationDialect) => Migration;

/** An auto-incrementing primary key on both dialects. */
export function withId<T extends string>(table: CreateTableBuilder<T>, dialect: MigrationDialect): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'bigint', (c) => c.generatedByDefaultAsIdentity().primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** Timestamps are epoch milliseconds (BIGINT) on both dialects. */
export const ts = 'bigint' as const;
/** Booleans are 0/1 integers on both dialects so rows read the same everywhere. */
export const bool = 'integer' as const;
/** Free text of any length. */
export const text = 'text' as const;

export function references(table: string, onDelete: 'cascade' | 'set null' | 'restrict' = 'cascade') {
  return (c: ColumnDefinitionBuilder) => c.references(`${table}.id`).onDelete(onDelete);
}

/** `work` in a transaction: PostgreSQL migrations already run in one (transactional DDL); SQLite's do not. */
export function atomically(db: AnyDb, work: (trx: AnyDb) => Promise<void>): Promise<void> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * SQLite's documented procedure for changing a table's constraints: create the new shape
 * under another name (`create` receives that name), copy every row, drop the old table,
 * rename, and carry the AUTOINCREMENT sequence over so ids are never reused. The new shape
 * has the old one's columns (a rebuild changes constraints, not columns), so they are copied
 * by the names the new table lists. The caller recreates the indexes afterwards. Only for
 * tables no other table refers to (foreign keys stay on). Run it inside `atomically`.
 */
export async function rebuildSqliteTable(
  trx: AnyDb,
  table: string,
  create: (name: string) => { execute(): Promise<unknown> },
): Promise<void> {
  const rebuilt = `${table}_rebuilt`;
  await create(rebuilt).execute();
  const columns = await sql<{ name: string }>`select name from pragma_table_info(${rebuilt})`.execute(trx);
  const list = sql.join(columns.rows.map((column) => sql.ref(column.name)));
  await sql`insert into ${sql.table(rebuilt)} (${list}) select ${list} from ${sql.table(table)}`.execute(trx);
  const sequence = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(trx);
  await trx.schema.dropTable(table).execute();
  await sql`alter table ${sql.table(rebuilt)} rename to ${sql.table(table)}`.execute(trx);
  // The old sequence is at least the largest id copied (rows may have been deleted since).
  const seq = sequence.rows[0]?.seq;
  if (seq !== undefined) {
    await sql`delete from sqlite_sequence where name = ${table}`.execute(trx);
    await sql`insert into sqlite_sequence (name, seq) values (${table}, ${seq})`.execute(trx);
  }
}
