/**
 * References to projects, groups and users as callers write them: a numeric ID, or a full
 * path (a username). Shared by routes and services, so it lives outside `infra/http`.
 */
export type EntityRef = { kind: 'id'; id: number } | { kind: 'path'; path: string };

/** Whether a reference is all digits: an ID rather than a path or a username. */
export const isNumericRef = (value: string): boolean => /^\d+$/.test(value);

/**
 * The ID a numeric reference names, or `null` when it has too many digits to be one (it
 * would overflow a BIGINT column or a double): such a reference finds nothing.
 */
export const idOf = (value: string): number | null => (/^\d{1,15}$/.test(value) ? Number(value) : null);

/** A numeric string is an ID; anything else is a full path. */
export function parseRef(value: string): EntityRef {
  const id = idOf(value);
  return id === null ? { kind: 'path', path: value } : { kind: 'id', id };
}
