import { FIELD_TYPES } from './mappings.rules.js';
import { isObject } from './normalize-common.rules.js';
import { GENERIC_KEYS, type FieldMapping, type GenericKey } from './normalize-generic.rules.js';

/** A value's place in a sample payload, as the mapping page offers it. */
export interface SamplePath {
  path: (string | number)[];
  /** `labels.severity`, `hosts[0]`: how a person reads the path. */
  label: string;
  kind: 'text' | 'array';
  /** The value in the sample, shortened, shown beside the path. */
  example: string;
}

/** The most paths a sample offers (a select of thousands helps nobody) and how deep they go. */
export const MAX_SAMPLE_PATHS = 300;
const MAX_DEPTH = 8;

/** What the mapping page calls each alert field. */
export const FIELD_LABELS: Record<GenericKey, string> = {
  title: 'Title',
  description: 'Description',
  start_time: 'Start time',
  end_time: 'End time',
  service: 'Service',
  monitoring_tool: 'Monitoring tool',
  hosts: 'Hosts',
  severity: 'Severity',
  fingerprint: 'Fingerprint',
  service_environment_name: 'Environment',
};
export const MAPPABLE_FIELDS = GENERIC_KEYS;

const labelOf = (path: readonly (string | number)[]) =>
  path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? key : `.${key}`)).join('');

const shorten = (value: unknown) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
};

/**
 * Every path of the document that holds a text, a number or a list of them: what a field can
 * be mapped to. Objects are walked, not offered; a list is offered whole and item by item.
 */
export function samplePaths(document: unknown): SamplePath[] {
  const out: SamplePath[] = [];
  const walk = (value: unknown, path: (string | number)[]) => {
    if (out.length >= MAX_SAMPLE_PATHS || path.length > MAX_DEPTH) return;
    if (typeof value === 'string' || typeof value === 'number') {
      if (path.length > 0) out.push({ path, label: labelOf(path), kind: 'text', example: shorten(value) });
    } else if (Array.isArray(value)) {
      if (path.length > 0 && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
        out.push({ path, label: labelOf(path), kind: 'array', example: shorten(value) });
      }
      value.forEach((item, i) => walk(item, [...path, i]));
    } else if (isObject(value)) {
      for (const [key, item] of Object.entries(value)) walk(item, [...path, key]);
    }
  };
  walk(document, []);
  return out;
}

/** The paths a field may take: lists only for the fields that take lists (hosts, fingerprint). */
export const pathsForField = (field: GenericKey, paths: readonly SamplePath[]): SamplePath[] =>
  paths.filter((p) => p.kind === 'text' || FIELD_TYPES[field].includes('array'));

/** The mapping's `type` for a field read from a path of this kind (reference A5.8). */
export function mappingType(field: GenericKey, kind: SamplePath['kind']): FieldMapping['type'] {
  if (kind === 'array') return 'array';
  return FIELD_TYPES[field].includes('datetime') ? 'datetime' : 'string';
}

/** The key a select's option carries for a path (its JSON). */
export const pathKey = (path: readonly (string | number)[]): string => JSON.stringify(path);
