import { sql } from 'kysely';
import { CompiledOnce, Repository, type Dialect, type Executor } from '../../infra/db/index.js';
import { withDetailsJson, type AuditRowValues, type QueuedRowValues } from './audit.repository.js';

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
const COLUMN_COUNT = 12;

/**
 * A commit's events as the queue stores them: JSON with each column whose value every event
 * shares written once (a commit's tokens share their author, entity, event name and address, and
 * often the time). Thirty token creations take about 2 KB, within one page; compressing them
 * would cost more on the request path than the page it saves (deflate: 25–50 µs a call).
 */
export function encodeEvents(rows: readonly QueuedRowValues[]): string {
  const first = rows[0];
  if (first === undefined) return JSON.stringify({ shared: {}, rows: [] } satisfies Encoded);
  const sharedColumns: number[] = [];
  for (let column = 0; column < COLUMN_COUNT; column += 1) {
    if (rows.every((row) => row[column] === first[column])) sharedColumns.push(column);
  }
  const shared: Record<number, unknown> = {};
  for (const column of sharedColumns) shared[column] = first[column];
  const own = rows.map((row) => row.filter((_, column) => !sharedColumns.includes(column)));
  return JSON.stringify({ shared, rows: own } satisfies Encoded);
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
  static async enqueue(executor: Executor, rows: readonly QueuedRowValues[]): Promise<void> {
    const events = encodeEvents(rows);
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
