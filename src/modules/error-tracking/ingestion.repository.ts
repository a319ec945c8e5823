import { sql } from 'kysely';
import { CompiledOnce, Repository } from '../../infra/db/index.js';
import type { NormalizedEvent } from './event.rules.js';
import type { SessionCount } from './sessions.rules.js';

const keep = (column: string) =>
  sql<number>`case when excluded.${sql.ref(column)} > error_tracking_errors.${sql.ref(column)} then excluded.${sql.ref(column)} else error_tracking_errors.${sql.ref(column)} end`;
const keepEarliest = (column: string) =>
  sql<number>`case when excluded.${sql.ref(column)} < error_tracking_errors.${sql.ref(column)} then excluded.${sql.ref(column)} else error_tracking_errors.${sql.ref(column)} end`;

/**
 * The key errors are found by (migration 0011): the first 64 bits of the SHA-1 hex fingerprint
 * as a signed integer, a third of the text's index entry.
 */
const fingerprintKey = (fingerprint: string): bigint => BigInt.asIntN(64, BigInt(`0x${fingerprint.slice(0, 16)}`));

// Every ingested event runs these two: compiled once (docs/perf-lab.md).
const UPSERT_ERROR = new CompiledOnce(
  10,
  (
    db,
    projectId: number,
    fingerprint: string,
    fingerprintKey: bigint,
    title: string,
    name: string,
    description: string,
    culprit: string,
    platform: string,
    occurredAt: number,
    now: number,
  ) =>
    db
      .insertInto('error_tracking_errors')
      .values({
        project_id: projectId,
        fingerprint,
        fingerprint_key: fingerprintKey,
        title,
        name,
        description,
        culprit,
        platform,
        status: 'unresolved',
        events_count: 1,
        first_seen_at: occurredAt,
        last_seen_at: occurredAt,
        issue_iid: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(['project_id', 'fingerprint_key']).doUpdateSet((eb) => ({
          events_count: sql<number>`error_tracking_errors.events_count + 1`,
          first_seen_at: keepEarliest('first_seen_at'),
          last_seen_at: keep('last_seen_at'),
          title: eb.ref('excluded.title'),
          name: eb.ref('excluded.name'),
          description: eb.ref('excluded.description'),
          culprit: eb.ref('excluded.culprit'),
          platform: eb.ref('excluded.platform'),
          status: sql<'unresolved'>`case when error_tracking_errors.status = 'resolved' then 'unresolved' else error_tracking_errors.status end`,
          // The time of this request when it reopens the error: returned, so a regression is known
          // without reading the row first (both dialects evaluate SET against the row as it was).
          regressed_at: sql<
            number | null
          >`case when error_tracking_errors.status = 'resolved' then excluded.updated_at else error_tracking_errors.regressed_at end`,
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .returning(['id', 'events_count', 'regressed_at']),
);
const INSERT_EVENT = new CompiledOnce(
  11,
  (
    db,
    projectId: number,
    errorId: number,
    eventId: string,
    occurredAt: number,
    now: number,
    level: string,
    environment: string | null,
    release: string | null,
    userIdentifier: string | null,
    description: string,
    payload: string,
  ) =>
    db
      .insertInto('error_tracking_error_events')
      .values({
        project_id: projectId,
        error_id: errorId,
        event_id: eventId,
        occurred_at: occurredAt,
        received_at: now,
        level,
        environment,
        release,
        user_identifier: userIdentifier,
        description,
        payload,
      })
      // Any of the event's unique indexes (migration 0010): the same id, error and time, or for
      // an event without a usable timestamp the same id and error.
      .onConflict((oc) => oc.doNothing())
      .returning('id'),
);

/** What the error upsert tells about the error it found or created. */
export interface UpsertedError {
  id: number;
  eventsCount: number;
  /** This event created the error (its first event). */
  created: boolean;
  /** This event reopened the error after it had been resolved. */
  regressed: boolean;
}

/** The writes of one acknowledged request; every method runs inside the caller's transaction. */
export class IngestionRepository extends Repository {
  /**
   * Find-or-create the error and count the event in one statement: the unique
   * (project, fingerprint key) index makes two identical events at once land on one row on
   * both dialects (PostgreSQL row lock; SQLite serialises writers). A new event on a
   * resolved error reopens it; an ignored error stays ignored.
   */
  async upsertError(projectId: number, event: NormalizedEvent, now: number): Promise<UpsertedError> {
    const row = await UPSERT_ERROR.first(
      this.db,
      projectId,
      event.fingerprint,
      fingerprintKey(event.fingerprint),
      event.title,
      event.name,
      event.description,
      event.culprit,
      event.platform,
      event.occurredAt,
      now,
    );
    if (!row) throw new Error('the error upsert returned no row');
    const eventsCount = Number(row.events_count);
    return {
      id: row.id,
      eventsCount,
      created: eventsCount === 1,
      regressed: row.regressed_at !== null && Number(row.regressed_at) === now,
    };
  }

  /** `false` when the error already has this event (an SDK retry: same id, and same time when the event gives one). */
  async insertEvent(projectId: number, errorId: number, event: NormalizedEvent, payload: string, now: number): Promise<boolean> {
    const row = await INSERT_EVENT.first(
      this.db,
      projectId,
      errorId,
      event.eventId,
      event.occurredAt,
      now,
      event.level,
      event.environment,
      event.release,
      event.userIdentifier,
      event.description,
      payload,
    );
    return row !== undefined;
  }

  async addSessionCounts(projectId: number, counts: readonly SessionCount[]): Promise<void> {
    if (counts.length === 0) return;
    await this.db
      .insertInto('error_tracking_session_counts')
      .values(
        counts.map((c) => ({
          project_id: projectId,
          release: c.release,
          environment: c.environment,
          bucket_at: c.bucketAt,
          started: c.started,
          exited: c.exited,
          errored: c.errored,
          crashed: c.crashed,
          abnormal: c.abnormal,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['project_id', 'release', 'environment', 'bucket_at']).doUpdateSet({
          started: sql<number>`error_tracking_session_counts.started + excluded.started`,
          exited: sql<number>`error_tracking_session_counts.exited + excluded.exited`,
          errored: sql<number>`error_tracking_session_counts.errored + excluded.errored`,
          crashed: sql<number>`error_tracking_session_counts.crashed + excluded.crashed`,
          abnormal: sql<number>`error_tracking_session_counts.abnormal + excluded.abnormal`,
        }),
      )
      .execute();
  }
}
