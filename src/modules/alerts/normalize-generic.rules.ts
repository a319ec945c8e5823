import {
  LIMITS,
  boundedText,
  dig,
  fingerprintOf,
  genericSeverity,
  normalizeHosts,
  parseTime,
  payloadFingerprint,
  textOf,
  type JsonObject,
  type NormalizedAlert,
} from './normalize-common.rules.js';

export const DEFAULT_TITLE = 'New: Alert';

/** The keys SPEC "Alert" gives a meaning; every other key is a custom field. */
export const GENERIC_KEYS = [
  'title',
  'description',
  'start_time',
  'end_time',
  'service',
  'monitoring_tool',
  'hosts',
  'severity',
  'fingerprint',
  'service_environment_name',
] as const;
export type GenericKey = (typeof GENERIC_KEYS)[number];

/** A custom mapping: which path of the payload feeds each field (reference A5.8). */
export interface FieldMapping {
  field_name: GenericKey;
  path: (string | number)[];
  type: 'string' | 'datetime' | 'array' | 'number';
  label?: string | null | undefined;
}

export interface GenericOptions {
  now: number;
  /** Premium and Ultimate generate a fingerprint from the payload when it names none. */
  generateFingerprint: boolean;
  mappings?: readonly FieldMapping[] | undefined;
}

function present(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/**
 * The values a custom mapping finds in one alert document, by field: only present ones, so
 * a blank mapped value leaves the field to its default (reference A5.8).
 */
export function mappedValues(document: JsonObject, mappings: readonly FieldMapping[] | undefined): Map<GenericKey, unknown> {
  const mapped = new Map<GenericKey, unknown>();
  for (const m of mappings ?? []) {
    const value = dig(document, m.path);
    if (present(value)) mapped.set(m.field_name, value);
  }
  return mapped;
}

/**
 * SPEC "Alert" generic payload rules. A custom mapping, when the integration has one, wins
 * over the default key whenever the mapped value is present (reference A5.8).
 */
export function normalizeGeneric(payload: JsonObject, options: GenericOptions): NormalizedAlert {
  const mapped = mappedValues(payload, options.mappings);
  const read = (key: GenericKey): unknown => (mapped.has(key) ? mapped.get(key) : payload[key]);

  const endedAt = parseTime(read('end_time'));
  const explicitFingerprint = fingerprintOf(read('fingerprint'));
  const customFieldPaths: string[][] = [];
  for (const key of Object.keys(payload)) {
    if (!(GENERIC_KEYS as readonly string[]).includes(key)) customFieldPaths.push([key]);
  }
  return {
    title: boundedText(read('title'), LIMITS.title) ?? DEFAULT_TITLE,
    description: boundedText(read('description'), LIMITS.description),
    service: boundedText(read('service'), LIMITS.service),
    monitoringTool: boundedText(read('monitoring_tool'), LIMITS.monitoringTool),
    hosts: normalizeHosts(read('hosts')),
    severity: genericSeverity(read('severity')),
    startedAt: parseTime(read('start_time')) ?? options.now,
    endedAt,
    // SPEC: "end_time: when present, the alert is resolved".
    resolving: endedAt !== null,
    fingerprint: explicitFingerprint ?? (options.generateFingerprint ? payloadFingerprint(payload) : null),
    environmentName: boundedText(read('service_environment_name'), LIMITS.environmentName),
    runbook: null,
    fullQuery: null,
    yLabel: null,
    incidentMarkdown: null,
    payload,
    customFieldPaths,
  };
}

/** For pages and incidents: a field's text even when the payload sent something odd. */
export const describeValue = (value: unknown): string => textOf(value) ?? JSON.stringify(value) ?? '';
