import { MissingAttributeError } from '../../infra/errors/index.js';
import {
  LIMITS,
  boundedText,
  fingerprintOf,
  firstText,
  isObject,
  normalizeHosts,
  parseTime,
  sha1Hex,
  textOf,
  truncate,
  type JsonObject,
  type NormalizedAlert,
  type Severity,
} from './normalize-common.rules.js';
import { mappedValues, type FieldMapping, type GenericKey } from './normalize-generic.rules.js';

/** SPEC "Alert": the metrics-monitoring webhook's required top-level attributes. */
export const REQUIRED_TOP_LEVEL = [
  'alerts',
  'commonAnnotations',
  'commonLabels',
  'externalURL',
  'groupKey',
  'groupLabels',
  'receiver',
  'status',
  'version',
] as const;

/** Reference A3: at most this many items of `alerts` are processed per request. */
export const MAX_ALERTS_PER_PAYLOAD = 100;

/** SPEC "Severity aliases for the metrics-monitoring shape" (case-insensitive). */
const SEVERITY_ALIASES: Record<string, Severity> = {};
for (const [severity, aliases] of Object.entries({
  critical: ['critical', 's1', 'p1', 'emergency', 'fatal'],
  high: ['high', 's2', 'p2', 'major', 'page'],
  medium: ['medium', 's3', 'p3', 'error', 'alert'],
  low: ['low', 's4', 'p4', 'warn', 'warning'],
  info: ['info', 's5', 'p5', 'debug', 'information', 'notice'],
} as Record<Severity, string[]>)) {
  for (const alias of aliases) SEVERITY_ALIASES[alias] = severity as Severity;
}

export function prometheusSeverity(value: unknown): Severity {
  return (
    (typeof value === 'string' && Object.hasOwn(SEVERITY_ALIASES, value.toLowerCase()) && SEVERITY_ALIASES[value.toLowerCase()]) ||
    'critical'
  );
}

/** Reference A2 step 4: the shape Alertmanager sends (all keys, `version` "4"). */
export function isPrometheusPayload(payload: JsonObject): boolean {
  return REQUIRED_TOP_LEVEL.every((key) => Object.hasOwn(payload, key)) && payload.version === '4';
}

/** 400 naming every missing top-level attribute (SPEC "Errors" rule 1). */
export function checkTopLevel(payload: JsonObject): JsonObject[] {
  const missing = REQUIRED_TOP_LEVEL.filter((key) => !Object.hasOwn(payload, key) || payload[key] === null);
  if (missing.length > 0) throw new MissingAttributeError(missing);
  if (!Array.isArray(payload.alerts)) throw new MissingAttributeError(['alerts']);
  return alertItems(payload.alerts);
}

/** The items of an `alerts` array that are processed: objects among the first 100 (reference A3). */
export function alertItems(alerts: readonly unknown[]): JsonObject[] {
  return alerts.slice(0, MAX_ALERTS_PER_PAYLOAD).filter(isObject);
}

/** `g0.expr` of the generator URL: the query behind the alert (reference A5.4). */
export function queryOf(generatorUrl: unknown): string | null {
  if (typeof generatorUrl !== 'string' || generatorUrl.length > 8192) return null;
  try {
    const expr = new URL(generatorUrl).searchParams.get('g0.expr');
    return expr ? truncate(expr, LIMITS.fullQuery) : null;
  } catch {
    return null;
  }
}

/** Annotations consumed by named fields; the others are shown as custom fields. */
const KNOWN_ANNOTATIONS = ['description', 'service_incident_markdown', 'runbook', 'service_y_label'];

const TITLE_PATHS = [
  ['annotations', 'title'],
  ['annotations', 'summary'],
  ['labels', 'alertname'],
];

/**
 * One item of `alerts` (SPEC "Alert" item table). Returns null when the item lacks a title
 * or `startsAt`: such items are skipped and the request still succeeds (reference A3).
 * A custom mapping (HTTP integrations whose sample was item-shaped, docs/decisions.md) reads
 * the item, as the established product's Mappable does inside Prometheus payloads: a present
 * mapped value replaces the raw value and then goes through the same rules (severity aliases,
 * fingerprint of start time, title and query).
 */
export function normalizePrometheusItem(item: JsonObject, now: number, mappings: readonly FieldMapping[] = []): NormalizedAlert | null {
  const mapped = mappedValues(item, mappings);
  const raw = (key: GenericKey, fallback: unknown): unknown => (mapped.has(key) ? mapped.get(key) : fallback);
  const labels = isObject(item.labels) ? item.labels : {};
  const annotations = isObject(item.annotations) ? item.annotations : {};
  const rawTitle = textOf(mapped.get('title')) ?? firstText(item, TITLE_PATHS);
  const startsAt = raw('start_time', item.startsAt);
  if (rawTitle === null || startsAt === undefined || startsAt === null || startsAt === '') return null;
  const title = truncate(rawTitle, LIMITS.title);
  const fullQuery = queryOf(item.generatorURL);
  const startsAtRaw = typeof startsAt === 'string' ? startsAt : JSON.stringify(startsAt);
  const endedAt = parseTime(raw('end_time', item.endsAt));
  // Alertmanager sends `0001-01-01T00:00:00Z` (Go's zero time) or a future expiry on firing
  // alerts; only a real end in the past resolves, besides `status: resolved`.
  const ended = endedAt !== null && endedAt > 0 && endedAt <= now;
  const titleKey = textOfKey(annotations, 'title') ? 'title' : textOfKey(annotations, 'summary') ? 'summary' : null;
  const customFieldPaths: string[][] = [];
  for (const key of Object.keys(annotations)) {
    if (!KNOWN_ANNOTATIONS.includes(key) && key !== titleKey) customFieldPaths.push(['annotations', key]);
  }
  return {
    title,
    description: boundedText(raw('description', annotations.description), LIMITS.description),
    service: boundedText(mapped.get('service'), LIMITS.service),
    monitoringTool: boundedText(mapped.get('monitoring_tool'), LIMITS.monitoringTool) ?? 'Prometheus',
    hosts: normalizeHosts(mapped.get('hosts')),
    severity: prometheusSeverity(raw('severity', labels.severity)),
    startedAt: parseTime(startsAt) ?? now,
    endedAt: ended ? endedAt : null,
    resolving: item.status === 'resolved' || ended,
    // Reference A5.7: start time, title and query, joined with `/`; a mapped fingerprint wins (A5.8).
    fingerprint: mapped.has('fingerprint')
      ? fingerprintOf(mapped.get('fingerprint'))
      : sha1Hex([startsAtRaw, rawTitle, fullQuery ?? ''].join('/')),
    environmentName: boundedText(raw('service_environment_name', labels.service_environment_name), LIMITS.environmentName),
    runbook: boundedText(annotations.runbook, LIMITS.runbook),
    fullQuery,
    yLabel: boundedText(firstText(item, [['annotations', 'service_y_label'], ...TITLE_PATHS]), LIMITS.yLabel),
    incidentMarkdown: boundedText(annotations.service_incident_markdown, LIMITS.incidentMarkdown),
    payload: item,
    customFieldPaths,
  };
}

function textOfKey(object: JsonObject, key: string): boolean {
  const value = object[key];
  return (typeof value === 'string' && value.trim() !== '') || typeof value === 'number' || typeof value === 'boolean';
}
