import { ValidationError } from '../../infra/errors/index.js';
import { PAYLOAD_LIMIT_BYTES, PAYLOAD_MAX_DEPTH, type MappingInput } from './alerts.schemas.js';
import { jsonDepth } from '../../infra/json-depth.js';
import { dig, isObject, type JsonObject } from './normalize-common.rules.js';
import { GENERIC_KEYS, type FieldMapping, type GenericKey } from './normalize-generic.rules.js';
import type { IntegrationRow } from './integrations.repository.js';

/** Which value types each mappable field takes (reference A5.8). */
export const FIELD_TYPES: Record<GenericKey, readonly string[]> = {
  title: ['string'],
  description: ['string'],
  service: ['string'],
  monitoring_tool: ['string'],
  severity: ['string'],
  service_environment_name: ['string'],
  start_time: ['datetime'],
  end_time: ['datetime'],
  hosts: ['string', 'array'],
  fingerprint: ['string', 'array'],
};

/**
 * A sample payload as text: valid JSON, an object, within the payload limits. A problem is
 * a 400 that says what is wrong with it (SPEC "Alert receiver": mapping needs valid JSON).
 */
export function parsePayloadExample(text: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw ValidationError.field('payload_example', `is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) throw ValidationError.field('payload_example', 'must be a JSON object');
  if (Buffer.byteLength(text) > PAYLOAD_LIMIT_BYTES || jsonDepth(parsed, PAYLOAD_MAX_DEPTH) > PAYLOAD_MAX_DEPTH) {
    throw ValidationError.field('payload_example', 'JSON is too big');
  }
  return parsed;
}

/**
 * The document a mapping reads: a sample with an `alerts` array stands for its first item,
 * which is also what its test alert sends (SPEC "Alert receiver").
 */
export function mappedDocument(example: JsonObject): JsonObject {
  const first: unknown = Array.isArray(example.alerts) ? example.alerts[0] : undefined;
  return isObject(first) ? first : example;
}

/** Checks a mapping against its sample: known fields, allowed types, paths present in it. */
export function checkMappings(mappings: readonly MappingInput[], example: JsonObject | null): FieldMapping[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  if (mappings.length > 0 && example === null) problems.push('need a payload_example to map from');
  for (const m of mappings) {
    const allowed = (FIELD_TYPES as Record<string, readonly string[] | undefined>)[m.field_name];
    if (!allowed) {
      problems.push(`field_name ${m.field_name} is not one of ${GENERIC_KEYS.join(', ')}`);
      continue;
    }
    if (seen.has(m.field_name)) problems.push(`field_name ${m.field_name} is mapped twice`);
    seen.add(m.field_name);
    if (!allowed.includes(m.type)) problems.push(`type of ${m.field_name} must be ${allowed.join(' or ')}`);
    if (example !== null && dig(mappedDocument(example), m.path) === undefined) {
      problems.push(`path ${JSON.stringify(m.path)} of ${m.field_name} is not in the payload_example`);
    }
  }
  if (problems.length > 0) throw new ValidationError({ payload_attribute_mappings: problems });
  return mappings.map((m) => ({
    field_name: m.field_name as GenericKey,
    path: m.path,
    type: m.type as FieldMapping['type'],
    label: m.label ?? null,
  }));
}

export function readMappings(text: string | null): FieldMapping[] {
  if (!text) return [];
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? (parsed as FieldMapping[]) : [];
}

/** An integration's custom mapping as ingestion applies it. */
export interface IngestMapping {
  fields: FieldMapping[];
  /**
   * The sample had an `alerts` array, so the paths were checked against one of its items:
   * they are read in each item of a live payload's `alerts` (SPEC "Alert receiver").
   */
  perItem: boolean;
}

// Receiver targets keep their integration row between requests (targets.service.ts): keyed by the
// row, the mapping and a sample of up to 1 MiB are parsed once, not for every alert.
const parsedMappings = new WeakMap<IntegrationRow, IngestMapping>();

export function ingestMapping(integration: IntegrationRow): IngestMapping {
  const known = parsedMappings.get(integration);
  if (known) return known;
  const fields = readMappings(integration.payload_attribute_mappings);
  const example = fields.length > 0 ? readExample(integration.payload_example) : null;
  const mapping = { fields, perItem: example !== null && mappedDocument(example) !== example };
  parsedMappings.set(integration, mapping);
  return mapping;
}

export function readExample(text: string | null): JsonObject | null {
  if (!text) return null;
  const parsed: unknown = JSON.parse(text);
  return isObject(parsed) ? parsed : null;
}
