import { Type } from '@sinclair/typebox';

/**
 * `:id` of a project or group: a numeric ID or the URL-encoded full path
 * (`group%2Fsub%2Fproject`). Repeated or empty values are rejected by the schema.
 */
export const NamespaceOrProjectId = Type.String({ minLength: 1, maxLength: 1024 });

/** Integer path parameters: non-numeric input fails validation with 400 (SPEC "Errors" rule 3). */
export const IntegerId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export type EntityRef = { kind: 'id'; id: number } | { kind: 'path'; path: string };

/** A numeric string is an ID; anything else is a full path. */
export function parseRef(value: string): EntityRef {
  const id = idOf(value);
  return id === null ? { kind: 'path', path: value } : { kind: 'id', id };
}

/** Whether a reference is all digits: an ID rather than a path or a username. */
export const isNumericRef = (value: string): boolean => /^\d+$/.test(value);

/**
 * The ID a numeric reference names, or `null` when it has too many digits to be one (it
 * would overflow a BIGINT column or a double): such a reference finds nothing.
 */
export const idOf = (value: string): number | null => (/^\d{1,15}$/.test(value) ? Number(value) : null);
