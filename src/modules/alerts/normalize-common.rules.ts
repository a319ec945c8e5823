import { hash } from 'node:crypto';

/** What a normaliser makes of one incoming alert; the processor stores it. */
export interface NormalizedAlert {
  title: string;
  description: string | null;
  service: string | null;
  monitoringTool: string | null;
  hosts: string[];
  severity: Severity;
  startedAt: number;
  endedAt: number | null;
  resolving: boolean;
  fingerprint: string | null;
  environmentName: string | null;
  runbook: string | null;
  fullQuery: string | null;
  yLabel: string | null;
  incidentMarkdown: string | null;
  payload: unknown;
  /**
   * Where the custom fields sit in `payload` (each a path of keys from its root): the alert
   * keeps these paths and reads the values from the stored payload (customFieldsOf), so a
   * large custom field is stored once, not twice.
   */
  customFieldPaths: string[][];
}

/**
 * An alert's custom fields, by the last key of each stored path, read from its payload. Rows
 * stored before the paths were (an object of values rather than an array of paths) are
 * returned as they are.
 */
export function customFieldsOf(payload: unknown, stored: unknown): Record<string, unknown> {
  if (!Array.isArray(stored)) return isObject(stored) ? stored : {};
  const fields: Record<string, unknown> = {};
  for (const path of stored as unknown[]) {
    if (!Array.isArray(path) || path.length === 0 || !path.every((key) => typeof key === 'string')) continue;
    const value = dig(payload, path);
    if (value !== undefined) fields[path[path.length - 1] as string] = value;
  }
  return fields;
}

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info', 'unknown'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Column bounds of reference A5.2 / A7 / A10. */
export const LIMITS = {
  title: 200,
  description: 1000,
  service: 100,
  monitoringTool: 100,
  hosts: 255,
  environmentName: 255,
  runbook: 1000,
  fullQuery: 1000,
  yLabel: 255,
  incidentMarkdown: 1_000_000,
} as const;

export type JsonObject = Record<string, unknown>;

export const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Ruby's `truncate(n)`: at most n characters, ending in `...` when cut (reference A5.2). */
export function truncate(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, Math.max(0, max - 3))}...`;
}

/** A scalar as text (numbers and booleans too); objects, arrays and blanks give null. */
export function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() === '' ? null : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

export function boundedText(value: unknown, max: number): string | null {
  const text = textOf(value);
  return text === null ? null : truncate(text, max);
}

/** `dig`: the value at a path of keys (and array indices), or undefined. */
export function dig(value: unknown, path: readonly (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    const index = typeof key === 'number' ? key : /^\d{1,6}$/.test(key) ? Number(key) : null;
    if (Array.isArray(current) && index !== null) current = current[index];
    else if (isObject(current) && typeof key === 'string' && Object.hasOwn(current, key)) current = current[key];
    else return undefined;
  }
  return current;
}

/** The first path whose value is present (reference A5.2: first truthy `dig` wins). */
export function firstText(value: unknown, paths: readonly (readonly string[])[]): string | null {
  for (const path of paths) {
    const text = textOf(dig(value, path));
    if (text !== null) return text;
  }
  return null;
}

/**
 * A DateTime: an ISO 8601 / RFC 3339 string, or epoch milliseconds as a number. Times that
 * do not parse read as absent, so the caller's fallback applies (reference A5.2 `:time`).
 */
export function parseTime(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && Math.abs(value) < 8.64e15 ? Math.trunc(value) : null;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 100) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** `Array(hosts).flatten`, then cut so the joined length stays within 255 (reference A5.5). */
export function normalizeHosts(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const flat = (Array.isArray(value) ? value.flat(Infinity) : [value]).map((h) => (typeof h === 'string' ? h : (JSON.stringify(h) ?? '')));
  const out: string[] = [];
  let length = 0;
  for (const host of flat) {
    if (host === '') continue;
    const room = LIMITS.hosts - length;
    if (room <= 0) break;
    const kept = host.slice(0, room);
    out.push(kept);
    length += kept.length;
  }
  return out;
}

/** Generic severity: case-insensitive, one of the six; anything else is `critical` (SPEC Alert). */
export function genericSeverity(value: unknown): Severity {
  const text = typeof value === 'string' ? value.toLowerCase() : '';
  return (SEVERITIES as readonly string[]).includes(text) ? (text as Severity) : 'critical';
}

function blank(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.keys(value).length === 0;
  return false;
}

export const sha1Hex = (text: string): string => hash('sha1', text, 'hex');

/**
 * `Fingerprint.generate` (reference A5.7): blank gives none; an array is flattened and its
 * elements joined with no separator; anything else is its text. SHA-1, lowercase hex.
 */
export function fingerprintOf(value: unknown): string | null {
  if (blank(value)) return null;
  if (Array.isArray(value)) return sha1Hex(value.flat(Infinity).map(scalarText).join(''));
  return sha1Hex(scalarText(value));
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return canonicalJson(value);
}

/** JSON with object keys sorted at every level: the same data always gives the same text. */
export function canonicalJson(value: unknown): string {
  // Loops and one growing string: every alert's fingerprint is computed this way, and the
  // map/filter/join version allocated an array per level.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) out += (i === 0 ? '' : ',') + canonicalJson(value[i] ?? null);
    return `${out}]`;
  }
  if (isObject(value)) {
    let out = '{';
    for (const key of Object.keys(value).sort()) {
      const member = value[key];
      if (member === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(member)}`;
    }
    return `${out}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The generated fingerprint of a generic payload (Premium and Ultimate; SPEC Alert
 * `fingerprint`, reference README): canonical JSON of the payload without `start_time`,
 * `end_time` and `hosts`; none when everything left is blank.
 */
export function payloadFingerprint(payload: JsonObject): string | null {
  const rest: JsonObject = {};
  for (const [key, value] of Object.entries(payload)) {
    if (key === 'start_time' || key === 'end_time' || key === 'hosts') continue;
    rest[key] = value;
  }
  if (Object.values(rest).every(blank)) return null;
  return sha1Hex(canonicalJson(rest));
}
