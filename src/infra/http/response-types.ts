import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

/*
 * Building blocks of response schemas. Fastify serialises every answer with its route's
 * response schema (fast-json-stringify), so these are chosen for what that compiler does
 * fast: a JSON type list (`["string", "null"]`) is a `typeof` test, while an `anyOf` (what
 * `Type.Union` makes) runs an ajv validator per value and per branch, and throws when no
 * branch matches.
 */

/** The plain JSON Schema of a TypeBox schema: TypeBox's symbol keys would make `Unsafe` keep the original kind. */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

/** `T | null` as one type list; `schema` must have a single `type` (string, integer, number, boolean, object, array). */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const json = plain(schema);
  if (typeof json.type !== 'string') throw new Error('Nullable takes a schema with one type');
  return Type.Unsafe<Static<T> | null>({ ...json, type: [json.type, 'null'] });
}

/** One of a fixed set of strings, as `{type: string, enum}`: serialised as a string, documented as the enumeration. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * A fixed pair, written as JSON Schema 2020-12 (OpenAPI 3.1) does (`prefixItems`; TypeBox's
 * `Type.Tuple` writes the older array form of `items`, which 2020-12 refuses). fast-json-stringify
 * does not read `prefixItems`: it writes the items with JSON.stringify.
 */
export function Pair<A extends TSchema, B extends TSchema>(first: A, second: B): TUnsafe<[Static<A>, Static<B>]> {
  return Type.Unsafe<[Static<A>, Static<B>]>({
    type: 'array',
    prefixItems: [plain(first), plain(second)],
    items: false,
    minItems: 2,
    maxItems: 2,
  });
}

/** An ISO 8601 instant (`toIso`). */
export const IsoDate = Type.String({ format: 'date-time' });
export const NullableIsoDate = Nullable(IsoDate);
export const NullableString = Nullable(Type.String());
export const NullableInteger = Nullable(Type.Integer());

/**
 * Arbitrary client data (an alert payload, an event): no schema, so fast-json-stringify
 * writes it whole with JSON.stringify, nested values included.
 */
export const AnyJson = Type.Unknown({ description: 'Any JSON value, as the client sent it' });

/** A JSON object whose keys are the client's: every property is written whole. */
export const JsonObject = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });
export const NullableJsonObject = Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true });
