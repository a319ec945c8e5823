import { sql } from 'kysely';
import { CompiledOnce, Repository, type Dialect, type Executor } from '../../infra/db/index.js';
import type { AuditEntry } from '../../infra/audit.js';
import { COLUMN_COUNT, entryValue, withDetailsJson, type AuditRowValues, type QueuedRowValues } from './audit.repository.js';

/** A queued row: its id and its events' row values, or null when its text does not decode. */
export interface QueuedEvents {
  id: number;
  events: string;
  rows: AuditRowValues[] | null;
}

// One row per shared commit (the commit buffer's flush): compiled once, run on SQLite's connection directly.
const INSERT = new CompiledOnce<unknown, [string]>(1, (db, events: string) => db.insertInto('audit_event_queue').values({ events }));

/** A commit's events as stored: the values every event shares once, by column, then each event's others. */
interface Encoded {
  shared: Record<number, unknown>;
  rows: unknown[][];
}

/** One value as JSON: numbers and strings without the general serialiser's walk. */
function jsonOf(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/**
 * A commit's events as the queue stores them: JSON with each column whose value every event
 * shares written once, then each event's other values (a commit's token creations share their
 * author, entity, event name, details and address, and often the time: each event adds its
 * token's id). The text is built here, value by value, rather than by `JSON.stringify` of the
 * commit's entries, which would serialise each event's shared values and details again on the
 * request path (docs/performance.md "Audit"). Thirty token creations take well under a page;
 * compressing them would cost more than the page it saves.
 */
export function encodeEvents(entries: readonly AuditEntry[]): string {
  const first = entries[0];
  if (first === undefined) return '{"shared":{},"rows":[]}';
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
    text += i === 0 ? '[' : ',[';
    separator = '';
    for (let column = 0; column < COLUMN_COUNT; column += 1) {
      if (shared[column]) continue;
      text += separator + jsonOf(entryValue(entry, column));
      separator = ',';
    }
    text += ']';
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

/** The row values `encodeEvents` stored, or null for text it did not write. */
export function decodeEvents(events: string): AuditRowValues[] | null {
  try {
    const { shared, rows } = JSON.parse(events) as Partial<Encoded>;
    if (typeof shared !== 'object' || shared === null || !Array.isArray(rows)) return null;
    const sharedColumns = Object.keys(shared).map(Number);
    const ownCount = COLUMN_COUNT - sharedColumns.length;
    return rows.map((own) => {
      if (!Array.isArray(own) || own.length !== ownCount) throw new Error('not a queued event');
      const values: unknown[] = [];
      let next = 0;
      for (let column = 0; column < COLUMN_COUNT; column += 1) values.push(column in shared ? shared[column] : own[next++]);
      // `details` was queued as the entry's object; the table holds its JSON.
      return withDetailsJson(values as QueuedRowValues);
    });
  } catch {
    return null;
  }
}

/**
 * The `audit_event_queue` table: a shared commit's events go in as one row (`enqueue`); the writer
 * takes rows out oldest first with `take`, in the transaction that writes their events into
 * `audit_events`, so each event is written once whatever crashes or whoever else takes.
 */
export class AuditQueueRepository extends Repository {
  /** Queues a commit's events in `executor`'s transaction. */
  static async enqueue(executor: Executor, entries: readonly AuditEntry[]): Promise<void> {
    const events = encodeEvents(entries);
    if (!INSERT.runNow(executor, events)) await INSERT.rows(executor, events);
  }

  /**
   * Deletes and returns up to `limit` of the oldest rows, skipping the ids in `skip` (rows seen not
   * to decode, kept for an operator). A write from its first statement: on SQLite it takes the write
   * lock at once; on PostgreSQL it locks the rows, and a second writer waits for them and then finds
   * them gone. Run it in the transaction that writes their events.
   */
  async take(dialect: Dialect, limit: number, skip: ReadonlySet<number>): Promise<QueuedEvents[]> {
    const skipped = skip.size > 0 ? sql`and id not in (${sql.join([...skip])})` : sql``;
    const lock = dialect === 'postgres' ? sql`for update` : sql``;
    const result = await sql<{ id: number | string; events: string }>`
      delete from audit_event_queue
      where id in (select id from audit_event_queue where 1 = 1 ${skipped} order by id limit ${limit} ${lock})
      returning id, events`.execute(this.db);
    return result.rows
      .map((row) => ({ id: Number(row.id), events: row.events, rows: decodeEvents(row.events) }))
      .sort((a, b) => a.id - b.id);
  }

  /** Puts back a row `take` removed (one that did not decode), under its id. */
  async restore(row: QueuedEvents): Promise<void> {
    await this.db.insertInto('audit_event_queue').values({ id: row.id, events: row.events }).execute();
  }

  /** Whether any row is queued, by any process. */
  async any(): Promise<boolean> {
    return (await this.db.selectFrom('audit_event_queue').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  /** Rows queued (for `/-/metrics`). */
  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('audit_event_queue')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
