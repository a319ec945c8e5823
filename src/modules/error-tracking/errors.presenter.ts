import { toIso } from '../../infra/clock.js';
import { exceptionValues, framesOf, type ExceptionValue, type Frame } from './event.rules.js';
import type { Bucket, ErrorDetails } from './errors.service.js';
import type { ErrorEventRow, ErrorRow } from './errors.repository.js';
import type { ClientKeyRow, SettingsRow } from './settings.repository.js';
import { trackerDsn } from './settings.service.js';

/** SPEC "Error tracking settings": external-tracker fields are null with the integrated backend. */
export function mapSettings(row: SettingsRow) {
  return {
    active: row.active === 1,
    project_name: null,
    tracker_external_url: null,
    api_url: null,
    integrated: row.integrated === 1,
    email_notifications: row.email_notifications === 1,
  };
}

/** SPEC "Client key". */
export function mapClientKey(row: ClientKeyRow, externalUrl: string) {
  return {
    id: row.id,
    active: row.active === 1,
    public_key: row.public_key,
    tracker_dsn: trackerDsn(externalUrl, row.public_key, row.project_id),
  };
}

export function mapError(row: ErrorRow, userCount: number, webUrl: string) {
  return {
    id: row.id,
    project_id: row.project_id,
    title: row.title,
    type: row.name,
    message: row.description,
    culprit: row.culprit,
    platform: row.platform,
    status: row.status,
    count: row.events_count,
    user_count: userCount,
    first_seen: toIso(row.first_seen_at),
    last_seen: toIso(row.last_seen_at),
    issue_iid: row.issue_iid,
    web_url: webUrl,
  };
}

export interface StackFrame {
  filename: string | null;
  function: string | null;
  module: string | null;
  lineno: number | null;
  colno: number | null;
  in_app: boolean;
  /** `[line number, source line]` pairs around the frame (reference B6). */
  context: [number, string][];
}

export interface StackTrace {
  type: string | null;
  value: string | null;
  /** Newest first: the frame that raised comes first. */
  frames: StackFrame[];
}

const strOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const numOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function frameContext(frame: Frame): [number, string][] {
  const line = numOrNull(frame.lineno);
  if (line === null || typeof frame.context_line !== 'string') return [];
  const pre = (Array.isArray(frame.pre_context) ? frame.pre_context : []).map(String);
  const post = (Array.isArray(frame.post_context) ? frame.post_context : []).map(String);
  return [
    ...pre.map((text, i): [number, string] => [line - pre.length + i, text]),
    [line, frame.context_line],
    ...post.map((text, i): [number, string] => [line + 1 + i, text]),
  ];
}

/** The stack trace of an event payload: the raised exception's, else the first exception or thread that has one. */
export function stackTraceOf(payloadText: string | undefined): StackTrace | null {
  if (!payloadText) return null;
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(payloadText) as Record<string, unknown>;
  } catch {
    return null;
  }
  const values = exceptionValues(payload);
  const primary = values[values.length - 1];
  const threads = (payload.threads as { values?: unknown } | undefined)?.values;
  const candidates: ExceptionValue[] = [
    ...(primary ? [primary] : []),
    ...values,
    ...(Array.isArray(threads) ? (threads as ExceptionValue[]) : []),
  ];
  const withFrames = candidates.find((c) => framesOf(c).length > 0);
  const source = withFrames ?? primary;
  if (!source) return null;
  const frames = framesOf(source)
    .slice(-200)
    .reverse()
    .map((f) => ({
      filename: strOrNull(f.filename) ?? strOrNull(f.abs_path),
      function: strOrNull(f.function),
      module: strOrNull(f.module),
      lineno: numOrNull(f.lineno),
      colno: numOrNull(f.colno),
      in_app: f.in_app === true,
      context: frameContext(f),
    }));
  return { type: strOrNull(primary?.type), value: strOrNull(primary?.value), frames };
}

export function mapErrorDetails(details: ErrorDetails, webUrl: string) {
  const { error, userCount, latest } = details;
  return {
    ...mapError(error, userCount, webUrl),
    frequency: {
      '24h': details.last24h.map(bucket),
      '30d': details.last30d.map(bucket),
    },
    latest_event: latest ? mapEventSummary(latest) : null,
    stack_trace: stackTraceOf(latest?.payload),
  };
}

const bucket = (b: Bucket): [string, number] => [toIso(b.at), b.count];

/** An event without its payload (an error's latest event). */
export function mapEventSummary(row: ErrorEventRow) {
  return {
    event_id: row.event_id,
    error_id: row.error_id,
    occurred_at: toIso(row.occurred_at),
    received_at: toIso(row.received_at),
    level: row.level,
    environment: row.environment,
    release: row.release,
    user: row.user_identifier,
    message: row.description,
  };
}

export function mapEvent(row: ErrorEventRow) {
  return { ...mapEventSummary(row), payload: JSON.parse(row.payload) as unknown };
}

/** One line per frame, Sentry-style: `at function (file:line)`, with in-app frames marked. */
export function formatStackTrace(trace: StackTrace | null): string {
  if (!trace) return '(no stack trace was sent with this error)';
  const head = [trace.type, trace.value].filter(Boolean).join(': ');
  const lines = trace.frames.map((f) => {
    const where = [f.filename ?? f.module ?? '?', f.lineno, f.colno].filter((p) => p !== null).join(':');
    return `  at ${f.function ?? '?'} (${where})${f.in_app ? ' [in app]' : ''}`;
  });
  return [head || '(no exception type)', ...lines].join('\n');
}

/** Markdown for "Create issue" (reference B8, with the stack trace the current docs describe). */
export function issueDescription(details: ErrorDetails, errorUrl: string): string {
  const { error, userCount } = details;
  const fence = '```';
  return [
    '# Error Details',
    '',
    `- Error: [${error.title.replaceAll(/[[\]]/g, '')}](${errorUrl})`,
    `- Culprit: ${error.culprit || '(unknown)'}`,
    `- First seen: ${toIso(error.first_seen_at)}`,
    `- Last seen: ${toIso(error.last_seen_at)}`,
    `- Events: ${error.events_count}`,
    `- Users: ${userCount}`,
    '',
    '## Stack trace',
    '',
    fence,
    formatStackTrace(stackTraceOf(details.latest?.payload)).replaceAll(fence, "'''"),
    fence,
  ].join('\n');
}

export function mapReleaseHealth(row: {
  release: string;
  environment: string;
  started: number | string;
  exited: number | string;
  errored: number | string;
  crashed: number | string;
  abnormal: number | string;
}) {
  const started = Number(row.started);
  const crashed = Number(row.crashed);
  return {
    release: row.release,
    environment: row.environment,
    sessions: started,
    exited: Number(row.exited),
    errored: Number(row.errored),
    crashed,
    abnormal: Number(row.abnormal),
    crash_free_rate: started > 0 ? Math.max(0, 1 - crashed / started) : null,
  };
}
