import type { ExpressionBuilder, SelectQueryBuilder } from 'kysely';
import { CompiledOnce, Repository, type DB, type Executor } from '../../infra/db/index.js';
import type { AuditEventsView } from '../../infra/db/tables/audit.js';
import type { AuditEntry } from '../../infra/audit.js';
import { COLUMNS, decodeEvents, EMPTY_SET, encodeEvents, type AuditEventValues } from './audit-set.encoding.js';

/** One event as the lists show it: the `audit_events` view's row. */
export type AuditEventRow = AuditEventsView;

/**
 * Events a set holds at most, and the factor of a set's id in its events' ids (event `n` of set
 * `id` is `id * 100 + n`): part of every id given out, so never changed (migration 0021).
 */
export const SET_SIZE = 100;
/** Sets read per query while a list walks back from the newest. */
const WALK_CHUNK = 500;

type SetArgs = [entityType: string, entityId: number, firstAt: number, lastAt: number, count: number, events: string];
// Every audited transaction writes its sets with this: compiled once, run on SQLite's connection directly.
const INSERT = new CompiledOnce<unknown, SetArgs>(
  6,
  (db, entityType: string, entityId: number, firstAt: number, lastAt: number, count: number, events: string) =>
    db.insertInto('audit_event_sets').values({
      entity_type: entityType,
      entity_id: entityId,
      first_at: firstAt,
      last_at: lastAt,
      event_count: count,
      events,
    }),
);

/** A transaction's events as the sets they are stored in: by entity, in the order recorded, up to SET_SIZE each. */
function setsOf(entries: readonly AuditEntry[]): SetArgs[] {
  const first = entries[0];
  // Usually every event is about one entity (a commit's token creations by one user): no grouping.
  const oneEntity = entries.every((e) => e.entityId === first?.entityId && e.entityType === first.entityType);
  const sets: SetArgs[] = [];
  for (const group of oneEntity ? [entries] : groupByEntity(entries)) {
    for (let at = 0; at < group.length; at += SET_SIZE) sets.push(setOf(group.slice(at, at + SET_SIZE)));
  }
  return sets;
}

/** One set's row: `entries` are about one entity, SET_SIZE at most. */
function setOf(entries: readonly AuditEntry[]): SetArgs {
  const head = entries[0] as AuditEntry;
  let firstAt = head.at;
  let lastAt = head.at;
  for (let i = 1; i < entries.length; i += 1) {
    const at = (entries[i] as AuditEntry).at;
    if (at < firstAt) firstAt = at;
    else if (at > lastAt) lastAt = at;
  }
  return [head.entityType, head.entityId, firstAt, lastAt, entries.length, encodeEvents(entries)];
}

function groupByEntity(entries: readonly AuditEntry[]): AuditEntry[][] {
  const groups = new Map<string, AuditEntry[]>();
  for (const entry of entries) {
    const key = `${entry.entityType}\u0000${entry.entityId}`;
    const group = groups.get(key);
    if (group) group.push(entry);
    else groups.set(key, [entry]);
  }
  return [...groups.values()];
}

export interface AuditFilter {
  createdAfter?: number;
  createdBefore?: number;
  entityType?: string;
  entityId?: number;
}

interface SetMeta {
  id: number;
  event_count: number;
  first_at: number;
  last_at: number;
}

/** Whether every event of the set is within the filter's time range (its entity is the set's). */
const wholly = (set: SetMeta, filter: AuditFilter): boolean =>
  (filter.createdAfter === undefined || set.first_at >= filter.createdAfter) &&
  (filter.createdBefore === undefined || set.last_at <= filter.createdBefore);

/** The filter's events of a set, oldest first, each with its id. */
function eventsOf(setId: number, text: string, filter: AuditFilter): AuditEventRow[] {
  // A set that does not decode (damaged by hand) shows no events rather than failing every list.
  const decoded = decodeEvents(text) ?? [];
  const rows: AuditEventRow[] = [];
  decoded.forEach((values, n) => {
    const row = rowOf(setId * SET_SIZE + n, values);
    if (filter.createdAfter !== undefined && row.created_at < filter.createdAfter) return;
    if (filter.createdBefore !== undefined && row.created_at > filter.createdBefore) return;
    rows.push(row);
  });
  return rows;
}

function rowOf(id: number, values: AuditEventValues): AuditEventRow {
  const row: Record<string, unknown> = { id };
  COLUMNS.forEach((column, i) => (row[column] = values[i]));
  return row as unknown as AuditEventRow;
}

/**
 * `audit_event_sets`: a transaction's audit events about one entity in one row (docs/decisions.md
 * "Audit events are stored as one row per transaction and entity"). Written by `store`; read by
 * the three lists, newest first (by set, then by place in the set), counted from the sets' event
 * counts where a set lies wholly inside the time range and by decoding the few that straddle it.
 */
export class AuditRepository extends Repository {
  /**
   * The entries written in `executor`'s transaction, one row per entity (SET_SIZE events at most):
   * on SQLite each row's INSERT runs at once on the connection (`CompiledOnce.runNow`), elsewhere
   * through Kysely (docs/performance.md "Audit").
   */
  static readonly store = async (executor: Executor, entries: readonly AuditEntry[]): Promise<void> => {
    for (const set of setsOf(entries)) if (!INSERT.runNow(executor, ...set)) await INSERT.rows(executor, ...set);
  };

  /** The sets that may hold events of the filter: its entity, a time span meeting its range. */
  private sets(filter: AuditFilter): SelectQueryBuilder<DB, 'audit_event_sets', object> {
    let query = this.db.selectFrom('audit_event_sets');
    if (filter.entityType !== undefined) query = query.where('entity_type', '=', filter.entityType);
    if (filter.entityId !== undefined) query = query.where('entity_id', '=', filter.entityId);
    if (filter.createdAfter !== undefined) query = query.where('last_at', '>=', filter.createdAfter);
    if (filter.createdBefore !== undefined) query = query.where('first_at', '<=', filter.createdBefore);
    return query;
  }

  /** How many events match. */
  async count(filter: AuditFilter): Promise<number> {
    const inside = (eb: ExpressionBuilder<DB, 'audit_event_sets'>) =>
      eb.and([
        ...(filter.createdAfter === undefined ? [] : [eb('first_at', '>=', filter.createdAfter)]),
        ...(filter.createdBefore === undefined ? [] : [eb('last_at', '<=', filter.createdBefore)]),
      ]);
    const whole = await this.sets(filter)
      .where(inside)
      .select((eb) => eb.fn.sum<number | string | null>('event_count').as('n'))
      .executeTakeFirstOrThrow();
    let total = Number(whole.n ?? 0);
    if (filter.createdAfter === undefined && filter.createdBefore === undefined) return total;
    const straddling = await this.sets(filter)
      .where((eb) => eb.not(inside(eb)))
      .select(['id', 'events'])
      .execute();
    for (const set of straddling) total += eventsOf(set.id, set.events, filter).length;
    return total;
  }

  /** The events from `offset` to `offset + limit`, newest first. */
  async page(filter: AuditFilter, limit: number, offset: number): Promise<AuditEventRow[]> {
    const rows: AuditEventRow[] = [];
    let skip = offset;
    let below = Number.POSITIVE_INFINITY;
    while (rows.length < limit) {
      let query = this.sets(filter).select(['id', 'event_count', 'first_at', 'last_at']);
      if (below !== Number.POSITIVE_INFINITY) query = query.where('id', '<', below);
      const chunk: SetMeta[] = await query.orderBy('id', 'desc').limit(WALK_CHUNK).execute();
      if (chunk.length === 0) break;
      below = (chunk[chunk.length - 1] as SetMeta).id;
      const texts = await this.textsOf(this.needed(chunk, filter, skip, limit - rows.length));
      for (const set of chunk) {
        if (rows.length >= limit) break;
        if (wholly(set, filter) && skip >= set.event_count) {
          skip -= set.event_count;
          continue;
        }
        const text = texts.get(set.id) ?? (await this.textsOf([set.id])).get(set.id) ?? '';
        const events = eventsOf(set.id, text, filter).reverse();
        const taken = events.slice(skip, skip + limit - rows.length);
        skip = Math.max(0, skip - events.length);
        rows.push(...taken);
      }
    }
    return rows;
  }

  /**
   * The sets of a chunk whose events a page needs: those it takes from, judged by their counts,
   * and every one straddling the time range (its count in the range is known only decoded).
   * `page` reads any other it turns out to need on its own.
   */
  private needed(chunk: readonly SetMeta[], filter: AuditFilter, skip: number, wanted: number): number[] {
    const ids: number[] = [];
    for (const set of chunk) {
      if (!wholly(set, filter)) {
        ids.push(set.id);
        continue;
      }
      if (wanted <= 0) continue;
      if (skip >= set.event_count) {
        skip -= set.event_count;
        continue;
      }
      ids.push(set.id);
      wanted -= set.event_count - skip;
      skip = 0;
    }
    return ids;
  }

  private async textsOf(ids: readonly number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('audit_event_sets').select(['id', 'events']).where('id', 'in', ids).execute();
    return new Map(rows.map((row) => [Number(row.id), row.events]));
  }

  async findById(id: number): Promise<AuditEventRow | undefined> {
    if (!Number.isSafeInteger(id) || id < 0) return undefined;
    const setId = Math.floor(id / SET_SIZE);
    const set = await this.db.selectFrom('audit_event_sets').select(['id', 'events']).where('id', '=', setId).executeTakeFirst();
    return set ? eventsOf(setId, set.events, {}).find((row) => row.id === id) : undefined;
  }

  /**
   * Deletes up to `batch` sets whose newest event is older than `cutoff`, oldest first; how many
   * sets and events went. The newest set of all is emptied rather than deleted: on SQLite a new
   * set takes the largest id plus one (migration 0022), and its row keeps ids from repeating.
   */
  async deleteOlderThan(cutoff: number, batch: number): Promise<{ sets: number; events: number }> {
    const newest = await this.db
      .selectFrom('audit_event_sets')
      .select(['id', 'last_at', 'event_count'])
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!newest) return { sets: 0, events: 0 };
    const deleted = await this.db
      .deleteFrom('audit_event_sets')
      .where('id', 'in', (eb) =>
        eb.selectFrom('audit_event_sets').select('id').where('last_at', '<', cutoff).where('id', '<', newest.id).orderBy('id').limit(batch),
      )
      .returning('event_count')
      .execute();
    let events = deleted.reduce((sum, row) => sum + Number(row.event_count), 0);
    if (deleted.length < batch && Number(newest.last_at) < cutoff && Number(newest.event_count) > 0) {
      const emptied = await this.db
        .updateTable('audit_event_sets')
        .set({ event_count: 0, events: EMPTY_SET })
        .where('id', '=', newest.id)
        .where('event_count', '>', 0)
        .executeTakeFirst();
      if (Number(emptied.numUpdatedRows) > 0) events += Number(newest.event_count);
    }
    return { sets: deleted.length, events };
  }
}
