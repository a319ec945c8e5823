import { hash, randomUUID } from 'node:crypto';
import { formatLogMessage } from './message-format.rules.js';

/** What an event contributes to its error and its own row (reference B6, C7). */
export interface NormalizedEvent {
  eventId: string;
  fingerprint: string;
  title: string;
  name: string;
  description: string;
  culprit: string;
  platform: string;
  level: string;
  environment: string | null;
  release: string | null;
  userIdentifier: string | null;
  occurredAt: number;
}

export interface Frame {
  filename?: string;
  abs_path?: string;
  module?: string;
  function?: string;
  lineno?: number;
  colno?: number;
  in_app?: boolean;
  context_line?: string;
  pre_context?: unknown[];
  post_context?: unknown[];
}

export interface ExceptionValue {
  type?: string;
  value?: string;
  module?: string;
  mechanism?: { synthetic?: boolean };
  stacktrace?: { frames?: Frame[] };
}

type Json = Record<string, unknown>;

const LEVELS = new Set(['fatal', 'error', 'warning', 'info', 'debug']);
/** An event timestamp this far ahead of the server clock is the SDK's clock being wrong. */
const FUTURE_SKEW_MS = 60_000;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Text for a column: NUL removed (PostgreSQL text cannot hold it), length bounded. */
export function clean(value: string, max: number): string {
  const text = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
  return text.length > max ? text.slice(0, max) : text;
}

/** `exception` as an array (Go SDK) or `{values: [...]}` (everyone else). */
export function exceptionValues(event: Json): ExceptionValue[] {
  const raw = event.exception;
  const list = Array.isArray(raw) ? raw : isObject(raw) && Array.isArray(raw.values) ? raw.values : [];
  return list.filter((v): v is ExceptionValue => isObject(v));
}

/** The exception that was raised: the last of the chain (reference C7: oldest first). */
export function primaryException(event: Json): ExceptionValue | undefined {
  const values = exceptionValues(event);
  return values[values.length - 1];
}

export function framesOf(exception: ExceptionValue | undefined): Frame[] {
  const frames = exception?.stacktrace?.frames;
  return Array.isArray(frames) ? frames.filter((f): f is Frame => isObject(f)) : [];
}

/** The frame nearest the raise that belongs to the application; the last frame if none say. */
export function topFrame(frames: Frame[]): Frame | undefined {
  for (let i = frames.length - 1; i >= 0; i -= 1) if (frames[i]?.in_app === true) return frames[i];
  return frames.some((f) => f.in_app === false) ? undefined : frames[frames.length - 1];
}

/**
 * `message` (string or `{message, params, formatted}`) or `logentry`: the template and the text.
 * Without `formatted`, the text is the template with its params (message-format.rules.ts).
 */
function messageOf(event: Json): { template: string; formatted: string } | undefined {
  for (const raw of [event.logentry, event.message]) {
    if (typeof raw === 'string' && raw !== '') return { template: raw, formatted: raw };
    if (isObject(raw)) {
      const template = str(raw.message) ?? str(raw.formatted);
      if (template) return { template, formatted: str(raw.formatted) ?? formatLogMessage(template, raw.params) ?? template };
    }
  }
  return undefined;
}

/** 32 lowercase hex digits (reference C7); a UUID with dashes is accepted and folded. */
export function normalizeEventId(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const hex = value.replaceAll('-', '').toLowerCase();
  return /^[0-9a-f]{32}$/.test(hex) ? hex : undefined;
}

export const newEventId = (): string => randomUUID().replaceAll('-', '');

/** RFC 3339 text or Unix seconds (number or numeric string); the receive time otherwise. */
export function eventTime(value: unknown, now: number): number {
  let ms: number | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) ms = value * 1000;
  else if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value)) ms = Number(value) * 1000;
  else if (typeof value === 'string') {
    const parsed = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
    if (!Number.isNaN(parsed)) ms = parsed;
  }
  if (ms === undefined || ms <= 0 || ms > now + FUTURE_SKEW_MS) return now;
  return Math.floor(ms);
}

/** id, username, e-mail or IP address, in that order (SPEC: each user uniquely identified). */
export function userIdentifier(event: Json, clientIp: string): string | null {
  const user = event.user;
  if (!isObject(user)) return null;
  const id = typeof user.id === 'number' ? String(user.id) : str(user.id);
  if (id) return clean(`id:${id}`, 255);
  const username = str(user.username);
  if (username) return clean(`username:${username}`, 255);
  const email = str(user.email);
  if (email) return clean(`email:${email.toLowerCase()}`, 255);
  const ip = str(user.ip_address);
  if (ip) return clean(`ip:${ip === '{{auto}}' ? clientIp : ip}`, 255);
  return null;
}

const sha1 = (parts: readonly string[]): string => hash('sha1', JSON.stringify(parts), 'hex');
const DEFAULT_PLACEHOLDER = /^\{\{\s*default\s*\}\}$/;

/**
 * Grouping: the SDK's `fingerprint` with `{{ default }}` expanded; else the exception type
 * and the top in-app frame (module, function, filename: never line numbers, which move
 * with every edit); else the message template, so "User %s failed" groups across users.
 */
function grouping(event: Json, exception: ExceptionValue | undefined, message: { template: string } | undefined): string {
  const frame = topFrame(framesOf(exception));
  const type = exception && !exception.mechanism?.synthetic ? str(exception.type) : undefined;
  let base: string[];
  if (type) base = ['exception', type, frame?.module ?? '', frame?.function ?? '', frame?.filename ?? ''];
  else if (message) base = ['message', message.template];
  else base = ['value', str(exception?.value) ?? '', frame?.function ?? ''];
  const fingerprint = event.fingerprint;
  if (Array.isArray(fingerprint) && fingerprint.length > 0) {
    const parts = fingerprint
      .slice(0, 100)
      .flatMap((p) => (typeof p === 'string' && DEFAULT_PLACEHOLDER.test(p) ? base : [String(p).slice(0, 1000)]));
    return sha1(['fingerprint', ...parts]);
  }
  return sha1(base);
}

function culpritOf(event: Json, exception: ExceptionValue | undefined): string {
  const transaction = str(event.transaction) ?? str(event.culprit);
  if (transaction) return transaction;
  const frame = topFrame(framesOf(exception));
  if (!frame) return '';
  const where = frame.module ?? frame.filename ?? frame.abs_path;
  const fn = frame.function ?? '?';
  return where ? `${fn} (${where})` : fn;
}

/** Reads what grouping and the lists need; the payload itself is stored whole. */
export function normalizeEvent(event: Json, context: { eventId?: string | undefined; now: number; clientIp: string }): NormalizedEvent {
  const exception = primaryException(event);
  const message = messageOf(event);
  const synthetic = exception?.mechanism?.synthetic === true || !str(exception?.type);
  let name: string;
  let description: string;
  let title: string;
  if (exception && !synthetic) {
    name = str(exception.type) ?? 'Error';
    description = str(exception.value) ?? message?.formatted ?? '';
    title = description ? `${name}: ${description}` : name;
  } else {
    description = message?.formatted ?? str(exception?.value) ?? '<unlabeled event>';
    name = description.split('\n', 1)[0] ?? description;
    title = name;
  }
  const level = str(event.level)?.toLowerCase();
  return {
    eventId: context.eventId ?? normalizeEventId(event.event_id) ?? newEventId(),
    fingerprint: grouping(event, exception, message),
    title: clean(title, 255),
    name: clean(name, 255),
    description: clean(description, 1024),
    culprit: clean(culpritOf(event, exception), 255),
    platform: clean(str(event.platform) ?? 'other', 64),
    level: level && LEVELS.has(level) ? level : level === 'warn' ? 'warning' : 'error',
    environment: str(event.environment) ? clean(String(event.environment), 255) : null,
    release: str(event.release) ? clean(String(event.release), 255) : null,
    userIdentifier: userIdentifier(event, context.clientIp),
    occurredAt: eventTime(event.timestamp, context.now),
  };
}
