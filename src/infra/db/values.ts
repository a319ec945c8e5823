import type { Flag } from './tables/core.js';

export const flag = (value: boolean): Flag => (value ? 1 : 0);

/** True when an insert or update broke a UNIQUE constraint, on either dialect. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
