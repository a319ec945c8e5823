// Frozen helpers for migrations: they never import application types, so an old
// migration keeps meaning what it meant when it shipped.
import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely, Migration } from 'kysely';

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
