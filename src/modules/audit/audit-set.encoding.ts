import type { AuditEntry } from '../../infra/audit.js';
import type { AuditEventsView } from '../../infra/db/tables/audit.js';

/**
 * Each column of the `audit_events` view an event fills, with the entry's value for it (`details`
 * still the object): the one place their order is written. A set's text names columns by their
 * index here, so the order is part of the stored format: append, never reorder.
 */
const COLUMN_VALUES = [
  ['author_id', (e) => e.authorId],
  ['author_name', (e) => e.authorName],
  ['entity_type', (e) => e.entityType],
  ['entity_id', (e) => e.entityId],
  ['entity_path', (e) => e.entityPath],
  ['target_type', (e) => e.targetType],
  ['target_id', (e) => e.targetId],
  ['target_details', (e) => e.targetDetails],
  ['event_name', (e) => e.eventName],
  ['details', (e) => e.details],
  ['ip_address', (e) => e.ipAddress],
  ['created_at', (e) => e.at],
] as const satisfies readonly (readonly [Exclude<keyof AuditEventsView, 'id'>, (entry: AuditEntry) => unknown])[];
export const COLUMNS = COLUMN_VALUES.map(([column]) => column);
const COLUMN_COUNT = COLUMN_VALUES.length;
const DETAILS = COLUMNS.indexOf('details');

/** An event's values in COLUMNS' order, `details` as JSON text: a row of the view but its id. */
export type AuditEventValues = [
  number,
  string,
  string,
  number,
  string | null,
  string | null,
  number | null,
  string | null,
  string,
  string,
  string | null,
  number,
];

const entryValue = (entry: AuditEntry, column: number): unknown => (COLUMN_VALUES[column] as (typeof COLUMN_VALUES)[number])[1](entry);

/** One value as JSON: numbers and strings without the general serialiser's walk. */
function jsonOf(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/** The text of a set that holds no event (retention empties the newest set rather than delete it). */
export const EMPTY_SET = '{"shared":{},"rows":[]}';

/**
 * A set's events as stored (`audit_event_sets.events`): JSON with each column whose value every
 * event shares written once under `shared`, then under `rows` one object per event with its other
 * values, both keyed by the column's index in COLUMNS (`{"shared":{"0":7,…},"rows":[{"6":41},…]}`:
 * a commit's token creations share their author, entity, event name, details and address, and each
 * adds its token's id). Keys rather than positions let the `audit_events` view read a value with
 * one JSON path whichever columns a set shares. The text is built value by value rather than by
 * `JSON.stringify` of the entries, which would serialise each event's shared values again on the
 * request path (docs/performance.md "Audit").
 */
export function encodeEvents(entries: readonly AuditEntry[]): string {
  const first = entries[0];
  if (first === undefined) return EMPTY_SET;
  const shared: boolean[] = [];
  let text = '{"shared":{';
  let separator = '';
  for (let column = 0; column < COLUMN_COUNT; column += 1) {
    const value = entryValue(first, column);
    let same = true;
    for (let i = 1; same && i < entries.length; i += 1) same = sameValue(entryValue(entries[i] as AuditEntry, column), value);
    shared.push(same);
    if (!same) continue;
    text += `${separator}"${column}":${jsonOf(value)}`;
    separator = ',';
  }
  text += '},"rows":[';
  for (let i = 0; i < entries.length; i += 1) {
    const entry = entries[i] as AuditEntry;
    text += i === 0 ? '{' : ',{';
    separator = '';
    for (let column = 0; column < COLUMN_COUNT; column += 1) {
      if (shared[column]) continue;
      text += `${separator}"${column}":${jsonOf(entryValue(entry, column))}`;
      separator = ',';
    }
    text += '}';
  }
  return `${text}]}`;
}

/** Whether two values of a column are the same: equal scalars, or details with the same facts. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  const aRecord = a as Record<string, unknown>;
  const bRecord = b as Record<string, unknown>;
  for (const key of aKeys) {
    if (!Object.hasOwn(bRecord, key)) return false;
    const x = aRecord[key];
    const y = bRecord[key];
    if (x === y) continue;
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length || x.some((item, at) => item !== y[at])) return false;
  }
  return true;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The events `encodeEvents` stored, in the order they were recorded, or null for text it did not write. */
export function decodeEvents(events: string): AuditEventValues[] | null {
  try {
    const { shared, rows } = JSON.parse(events) as { shared?: unknown; rows?: unknown };
    if (!isRecord(shared) || !Array.isArray(rows)) return null;
    const decoded: AuditEventValues[] = [];
    for (const own of rows) {
      if (!isRecord(own)) return null;
      const values: unknown[] = [];
      for (let column = 0; column < COLUMN_COUNT; column += 1) {
        const key = String(column);
        if (Object.hasOwn(own, key)) values.push(own[key]);
        else if (Object.hasOwn(shared, key)) values.push(shared[key]);
        else return null;
      }
      // `details` was stored as the entry's object; the view and the API's rows hold its JSON.
      values[DETAILS] = JSON.stringify(values[DETAILS] ?? {});
      decoded.push(values as AuditEventValues);
    }
    return decoded;
  } catch {
    return null;
  }
}
