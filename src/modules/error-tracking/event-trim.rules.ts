/**
 * Bounds on what one stored event keeps, after Sentry's Relay (docs/decisions.md "Error
 * tracking: stored events are trimmed"): the parts an SDK lets grow with the program's run
 * (breadcrumbs, deep stacks, `extra`) are cut past a bound; the rest of the event is bounded
 * by the body limit. One pass, and the work is bounded by the bounds, not by the payload.
 */

/** Breadcrumbs kept: the most recent (the SDKs' own default `maxBreadcrumbs`). */
export const MAX_BREADCRUMBS = 100;
/** Frames kept of a longer stack: the oldest (entry points) and the most recent (where it failed). */
export const KEPT_OLDEST_FRAMES = 50;
export const KEPT_RECENT_FRAMES = 200;
/** `extra`: nesting kept, estimated JSON size kept, and the length of one string. */
export const EXTRA_MAX_DEPTH = 7;
export const EXTRA_MAX_BYTES = 16 * 1024;
export const EXTRA_MAX_STRING = 1024;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Trims `event` in place; `true` when anything was cut (the received text is then no longer what is stored). */
export function trimEvent(event: Json): boolean {
  let changed = trimBreadcrumbs(event);
  for (const holder of stackHolders(event)) if (trimFrames(holder)) changed = true;
  if (event.extra !== undefined) {
    const budget = { left: EXTRA_MAX_BYTES, cut: false };
    const extra = trimBag(event.extra, 0, budget);
    if (budget.cut) {
      event.extra = extra ?? {};
      changed = true;
    }
  }
  return changed;
}

function trimBreadcrumbs(event: Json): boolean {
  const raw = event.breadcrumbs;
  const list = Array.isArray(raw) ? raw : isObject(raw) && Array.isArray(raw.values) ? raw.values : undefined;
  if (!list || list.length <= MAX_BREADCRUMBS) return false;
  const kept = list.slice(list.length - MAX_BREADCRUMBS);
  if (Array.isArray(raw)) event.breadcrumbs = kept;
  else (raw as Json).values = kept;
  return true;
}

/** Everything that may carry `stacktrace.frames`: each exception, each thread, the event itself. */
function stackHolders(event: Json): Json[] {
  const holders: Json[] = [event];
  for (const container of [event.exception, event.threads]) {
    const list = Array.isArray(container) ? container : isObject(container) && Array.isArray(container.values) ? container.values : [];
    for (const item of list) if (isObject(item)) holders.push(item);
  }
  return holders;
}

/** Keeps the oldest and most recent frames, and says which were left out (Sentry's `frames_omitted`, end exclusive). */
function trimFrames(holder: Json): boolean {
  let changed = false;
  for (const key of ['stacktrace', 'raw_stacktrace']) {
    const trace = holder[key];
    if (!isObject(trace) || !Array.isArray(trace.frames)) continue;
    const frames = trace.frames as unknown[];
    if (frames.length <= KEPT_OLDEST_FRAMES + KEPT_RECENT_FRAMES) continue;
    const recentFrom = frames.length - KEPT_RECENT_FRAMES;
    trace.frames = [...frames.slice(0, KEPT_OLDEST_FRAMES), ...frames.slice(recentFrom)];
    trace.frames_omitted = [KEPT_OLDEST_FRAMES, recentFrom];
    changed = true;
  }
  return changed;
}

/**
 * A copy of `value` within the budget: strings shortened, containers past the depth dropped,
 * members past the size budget dropped. Every value visited spends at least one unit and a
 * container stops at the first member that does not fit, so the walk visits at most about
 * EXTRA_MAX_BYTES values whatever the payload holds. `undefined`: the value does not fit.
 */
function trimBag(value: unknown, depth: number, budget: { left: number; cut: boolean }): unknown {
  if (budget.left <= 0) {
    budget.cut = true;
    return undefined;
  }
  if (typeof value === 'string') {
    const kept = value.length > EXTRA_MAX_STRING ? `${value.slice(0, EXTRA_MAX_STRING - 3)}...` : value;
    if (kept !== value) budget.cut = true;
    budget.left -= kept.length + 2;
    return kept;
  }
  if (typeof value !== 'object' || value === null) {
    budget.left -= 8;
    return value;
  }
  if (depth >= EXTRA_MAX_DEPTH) {
    budget.cut = true;
    return undefined;
  }
  budget.left -= 2;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const kept = trimBag(item, depth + 1, budget);
      if (kept === undefined && budget.left <= 0) break;
      out.push(kept ?? null);
    }
    return out;
  }
  // No prototype: a `__proto__` member (JSON.parse makes it an own key) stays a plain member.
  const out = Object.create(null) as Json;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    budget.left -= key.length + 4;
    const kept = trimBag((value as Json)[key], depth + 1, budget);
    if (kept === undefined && budget.left <= 0) break;
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}
