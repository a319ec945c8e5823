/**
 * What the error page shows of one stored event: its breadcrumbs, tags, user, request, contexts
 * and SDK, read from the Sentry payload as the SDKs send it. Pure and bounded: a payload is
 * already trimmed at ingestion (event-trim.rules.ts), and each list is cut again here so a page
 * stays small whatever was stored.
 */

type Json = Record<string, unknown>;

export interface Breadcrumb {
  timestamp: number | null;
  category: string | null;
  level: string | null;
  type: string | null;
  message: string | null;
  data: [string, string][];
}

export interface EventFacts {
  breadcrumbs: Breadcrumb[];
  tags: [string, string][];
  user: [string, string][];
  request: { method: string | null; url: string | null; query: string | null; headers: [string, string][] } | null;
  contexts: { name: string; entries: [string, string][] }[];
  sdk: { name: string; version: string | null; packages: string[] } | null;
}

/** Breadcrumbs shown (the newest); SDKs keep 100 by default. */
export const MAX_BREADCRUMBS = 100;
const MAX_ENTRIES = 50;
const MAX_TEXT = 500;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v.slice(0, MAX_TEXT) : null);

/** A value as one line of text: strings as they are, anything else as compact JSON. */
function text(v: unknown): string {
  if (typeof v === 'string') return v.slice(0, MAX_TEXT);
  const json = JSON.stringify(v) ?? String(v);
  return json.length > MAX_TEXT ? `${json.slice(0, MAX_TEXT - 1)}…` : json;
}

const entries = (v: unknown): [string, string][] =>
  isObject(v)
    ? Object.entries(v)
        .filter(([, value]) => value !== null && value !== undefined)
        .slice(0, MAX_ENTRIES)
        .map(([key, value]): [string, string] => [key.slice(0, 200), text(value)])
    : [];

/** Sentry's list fields come as an array or as `{ values: [...] }`. */
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : isObject(v) && Array.isArray(v.values) ? v.values : []);

/** A timestamp as Sentry sends it (seconds, or an RFC 3339 string) in epoch milliseconds. */
function millis(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.round(v * 1000);
  if (typeof v === 'string') {
    const at = Date.parse(v);
    return Number.isNaN(at) ? null : at;
  }
  return null;
}

function breadcrumbsOf(payload: Json): Breadcrumb[] {
  return listOf(payload.breadcrumbs)
    .filter(isObject)
    .slice(-MAX_BREADCRUMBS)
    .map((b) => ({
      timestamp: millis(b.timestamp),
      category: str(b.category),
      level: str(b.level),
      type: str(b.type),
      message: str(b.message),
      data: entries(b.data),
    }));
}

/** Tags as `{key: value}` (most SDKs) or `[[key, value], …]` (the Java SDK, and events after normalisation). */
function tagsOf(payload: Json): [string, string][] {
  const tags = payload.tags;
  if (Array.isArray(tags)) {
    return tags
      .filter((t): t is unknown[] => Array.isArray(t) && t.length === 2)
      .slice(0, MAX_ENTRIES)
      .map(([key, value]): [string, string] => [text(key), text(value)]);
  }
  return entries(tags);
}

function requestOf(payload: Json): EventFacts['request'] {
  const request = payload.request;
  if (!isObject(request)) return null;
  const headers = Array.isArray(request.headers)
    ? request.headers
        .filter((h): h is unknown[] => Array.isArray(h) && h.length === 2)
        .slice(0, MAX_ENTRIES)
        .map(([key, value]): [string, string] => [text(key), text(value)])
    : entries(request.headers);
  const query =
    typeof request.query_string === 'string'
      ? str(request.query_string)
      : isObject(request.query_string)
        ? text(request.query_string)
        : null;
  return { method: str(request.method), url: str(request.url), query, headers };
}

function sdkOf(payload: Json): EventFacts['sdk'] {
  const sdk = payload.sdk;
  if (!isObject(sdk) || str(sdk.name) === null) return null;
  const packages = listOf(sdk.packages)
    .filter(isObject)
    .slice(0, MAX_ENTRIES)
    .map((p) => [str(p.name), str(p.version)].filter(Boolean).join(' '));
  return { name: str(sdk.name)!, version: str(sdk.version), packages };
}

/** Reads the facts of a stored payload (JSON text); an unreadable payload shows none. */
export function eventFacts(payloadText: string): EventFacts {
  let payload: unknown;
  try {
    payload = JSON.parse(payloadText);
  } catch {
    payload = null;
  }
  if (!isObject(payload)) return { breadcrumbs: [], tags: [], user: [], request: null, contexts: [], sdk: null };
  const contexts = isObject(payload.contexts)
    ? Object.entries(payload.contexts)
        .filter(([, value]) => isObject(value))
        .slice(0, MAX_ENTRIES)
        .map(([name, value]) => ({ name: name.slice(0, 200), entries: entries(value) }))
    : [];
  return {
    breadcrumbs: breadcrumbsOf(payload),
    tags: tagsOf(payload),
    user: entries(payload.user),
    request: requestOf(payload),
    contexts,
    sdk: sdkOf(payload),
  };
}
