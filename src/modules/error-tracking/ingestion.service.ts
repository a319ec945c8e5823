import type { ErrorReport } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Executor, Transact } from '../../infra/db/index.js';
import { parseFailure, parseJsonObject } from './collector.body.js';
import type { Envelope } from './envelope.rules.js';
import { clean, normalizeEvent, normalizeEventId, type NormalizedEvent } from './event.rules.js';
import type { EventQuota } from './event-quota.service.js';
import { trimEvent } from './event-trim.rules.js';
import type { IngestionRepository } from './ingestion.repository.js';
import { MAX_SESSION_UPDATES, mergeCounts, sessionAggregates, sessionUpdate, type SessionCount } from './sessions.rules.js';

/** Item types an SDK may send that this backend accepts and does not keep (reference C4). */
const DROPPED_TYPES = new Set(['transaction', 'attachment', 'client_report', 'check_in']);

interface Batch {
  event: { normalized: NormalizedEvent; payload: string } | null;
  sessions: SessionCount[];
}

class DuplicateEvent extends Error {}

/** Called in the ingestion's transaction for a new or regressed error only (the error mails). */
export type ErrorReported = (trx: Executor, error: ErrorReport) => Promise<void>;

/**
 * Turns accepted bodies into rows. Everything one request carries is written in one
 * transaction (error upsert, event insert, session counters), committed before the answer.
 */
export class IngestionService {
  constructor(
    private readonly transact: Transact,
    private readonly rows: IngestionRepository,
    private readonly clock: Clock,
    /** Per-project bound on stored events; none in tests that build the service alone. */
    private readonly quota?: EventQuota,
    /** New and regressed errors; an event on a known open error never calls it (no added work there). */
    private readonly reported?: ErrorReported,
  ) {}

  /** A store body: one event. Returns the event id the SDK expects back. */
  async storeEvent(projectId: number, payload: Record<string, unknown>, clientIp: string): Promise<string> {
    const now = this.clock.now();
    const normalized = normalizeEvent(payload, { now, clientIp });
    trimEvent(payload);
    await this.write(projectId, { event: { normalized, payload: serialize(payload) }, sessions: [] }, now);
    return normalized.eventId;
  }

  /** An envelope: its event and session items are kept, known telemetry dropped, unknown types skipped. */
  async storeEnvelope(projectId: number, envelope: Envelope, clientIp: string): Promise<string | null> {
    const now = this.clock.now();
    const headerEventId = normalizeEventId(envelope.headers.event_id);
    const batch: Batch = { event: null, sessions: [] };
    let sessionItems = 0;
    for (const item of envelope.items) {
      if (item.type === 'event') {
        if (batch.event) throw parseFailure('an envelope carries at most one event item');
        const text = item.payload.toString('utf8');
        const payload = parseJsonObject(text, 'event item');
        const normalized = normalizeEvent(payload, { eventId: headerEventId ?? normalizeEventId(payload.event_id), now, clientIp });
        // Grouping above saw the event as sent; what is stored is trimmed (event-trim.rules.ts).
        batch.event = { normalized, payload: trimEvent(payload) ? serialize(payload) : storable(text, payload) };
      } else if (item.type === 'session' || item.type === 'sessions') {
        sessionItems += 1;
        if (sessionItems > MAX_SESSION_UPDATES) throw parseFailure(`an envelope carries at most ${MAX_SESSION_UPDATES} session items`);
        const payload = parseJsonObject(item.payload.toString('utf8'), `${item.type} item`);
        if (item.type === 'sessions') batch.sessions.push(...sessionAggregates(payload, now));
        else {
          const count = sessionUpdate(payload, now);
          if (count) batch.sessions.push(count);
        }
      } else if (!DROPPED_TYPES.has(item.type)) {
        // Unknown item types are skipped (reference C4: "must be skipped gracefully").
        continue;
      }
    }
    batch.sessions = mergeCounts(batch.sessions);
    if (batch.event || batch.sessions.length > 0) await this.write(projectId, batch, now);
    return batch.event?.normalized.eventId ?? headerEventId ?? null;
  }

  private async write(projectId: number, batch: Batch, now: number): Promise<void> {
    // A full project refuses the whole request, its sessions too: a 429 says nothing was kept.
    if (batch.event) await this.quota?.admit(projectId);
    try {
      await this.transaction(projectId, batch, now);
      if (batch.event) this.quota?.stored(projectId);
    } catch (error) {
      // An event the error has stored before is an SDK retry: keep the first copy, count it
      // once, and still record the sessions that came with it.
      if (!(error instanceof DuplicateEvent)) throw error;
      if (batch.sessions.length > 0) await this.transaction(projectId, { event: null, sessions: batch.sessions }, now);
    }
  }

  private transaction(projectId: number, batch: Batch, now: number): Promise<void> {
    return this.transact(async (trx) => {
      const repo = this.rows.on(trx);
      if (batch.event) {
        const { normalized } = batch.event;
        const error = await repo.upsertError(projectId, normalized, now);
        if (!(await repo.insertEvent(projectId, error.id, normalized, batch.event.payload, now))) throw new DuplicateEvent();
        if ((error.created || error.regressed) && this.reported) {
          await this.reported(trx, {
            projectId,
            errorId: error.id,
            regressed: error.regressed,
            title: normalized.title,
            culprit: normalized.culprit,
            eventsCount: error.eventsCount,
            at: now,
          });
        }
      }
      await repo.addSessionCounts(projectId, batch.sessions);
    });
  }
}

/**
 * The event as sent, when its text holds no NUL (escaped or raw): storing the received
 * JSON spares serialising the parsed object again.
 */
function storable(text: string, payload: Record<string, unknown>): string {
  return text.includes('\\u0000') || text.includes('\u0000') ? serialize(payload) : text;
}

/** The payload as stored: JSON text without NUL characters (reference B3: scrubbed before storing). */
function serialize(payload: Record<string, unknown>): string {
  const text = JSON.stringify(payload);
  if (!text.includes('\\u0000')) return text;
  return JSON.stringify(payload, (_key, value: unknown) => (typeof value === 'string' ? clean(value, value.length) : value));
}
