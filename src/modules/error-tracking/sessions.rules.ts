import { eventTime } from './event.rules.js';
import { clean } from './event.rules.js';

/** One hourly release-health counter change. */
export interface SessionCount {
  release: string;
  environment: string;
  bucketAt: number;
  started: number;
  exited: number;
  errored: number;
  crashed: number;
  abnormal: number;
}

const HOUR = 3_600_000;
/** Sentry accepts at most 100 sessions per envelope (reference C4). */
export const MAX_SESSION_UPDATES = 100;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? Math.min(v, 1_000_000) : 0);

function attrs(payload: Json): { release: string; environment: string } | null {
  const a = isObject(payload.attrs) ? payload.attrs : {};
  // A session without a release cannot be attributed (Sentry drops those too).
  if (typeof a.release !== 'string' || a.release === '') return null;
  const environment = typeof a.environment === 'string' && a.environment !== '' ? a.environment : 'production';
  return { release: clean(a.release, 255), environment: clean(environment, 255) };
}

const bucket = (value: unknown, now: number): number => {
  const at = eventTime(value, now);
  return at - (at % HOUR);
};

/**
 * A `session` item (Sentry session update): `init: true` starts a session; a final status
 * (`exited`, `crashed`, `abnormal`, `errored`) ends it. An exited session that saw errors
 * counts as errored, as Sentry's release health does.
 */
export function sessionUpdate(payload: Json, now: number): SessionCount | null {
  const where = attrs(payload);
  if (!where) return null;
  const status = typeof payload.status === 'string' ? payload.status : 'ok';
  const errors = count(payload.errors);
  const row: SessionCount = {
    ...where,
    bucketAt: bucket(payload.started ?? payload.timestamp, now),
    started: payload.init === true ? 1 : 0,
    exited: status === 'exited' && errors === 0 ? 1 : 0,
    errored: status === 'errored' || (status === 'exited' && errors > 0) ? 1 : 0,
    crashed: status === 'crashed' ? 1 : 0,
    abnormal: status === 'abnormal' ? 1 : 0,
  };
  return row.started + row.exited + row.errored + row.crashed + row.abnormal > 0 ? row : null;
}

/** A `sessions` item (pre-aggregated by the SDK): each aggregate is a count of ended sessions. */
export function sessionAggregates(payload: Json, now: number): SessionCount[] {
  const where = attrs(payload);
  if (!where || !Array.isArray(payload.aggregates)) return [];
  const out: SessionCount[] = [];
  for (const aggregate of payload.aggregates.slice(0, MAX_SESSION_UPDATES)) {
    if (!isObject(aggregate)) continue;
    const exited = count(aggregate.exited);
    const errored = count(aggregate.errored);
    const crashed = count(aggregate.crashed);
    const abnormal = count(aggregate.abnormal);
    const total = exited + errored + crashed + abnormal;
    if (total === 0) continue;
    out.push({ ...where, bucketAt: bucket(aggregate.started, now), started: total, exited, errored, crashed, abnormal });
  }
  return out;
}

/** Folds counters of the same release, environment and hour so each is one upsert. */
export function mergeCounts(rows: readonly SessionCount[]): SessionCount[] {
  const byKey = new Map<string, SessionCount>();
  for (const row of rows) {
    const key = JSON.stringify([row.release, row.environment, row.bucketAt]);
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, { ...row });
    else {
      seen.started += row.started;
      seen.exited += row.exited;
      seen.errored += row.errored;
      seen.crashed += row.crashed;
      seen.abnormal += row.abnormal;
    }
  }
  return [...byKey.values()];
}
