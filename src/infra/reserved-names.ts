/**
 * Usernames of the internal users that system features act as (identity's InternalUsers).
 * They are reserved below, so no person or group can take one before the feature needs it.
 */
export const INTERNAL_USERNAMES = {
  alertBot: 'alert-bot',
} as const;

/**
 * Top-level names that routes of the server already use, or that internal users hold; no user
 * or group may take them as a path, or its URL would shadow (or be shadowed by) a route.
 */
export const RESERVED_TOP_LEVEL_NAMES = new Set<string>([
  ...Object.values(INTERNAL_USERNAMES),
  '-',
  '.well-known',
  'admin',
  'api',
  'assets',
  'dashboard',
  'errortracking',
  'explore',
  'favicon.ico',
  'files',
  'groups',
  'health_check',
  'help',
  'import',
  'jwt',
  'login',
  'new',
  'oauth',
  'profile',
  'projects',
  'public',
  'robots.txt',
  's',
  'search',
  'sent_notifications',
  'snippets',
  'static',
  'uploads',
  'user_settings',
  'users',
  'v2',
]);

/** Path segments a project or subgroup may not take (they end routes under a project). */
export const RESERVED_SUBPATH_NAMES = new Set(['-', 'alerts', 'prometheus', 'settings', 'tree', 'blob', 'raw', 'wiki', 'wikis']);

/** Letters, digits, `_`, `-`, `.`; starts with a letter, digit or `_`; no `.git`/`.atom` ending. */
export const PATH_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$/;

/** `internal`: the name of an internal user, which identity creates under its reserved name. */
export function pathProblem(value: string, topLevel: boolean, internal = false): string | null {
  if (value.length === 0) return "can't be blank";
  if (value.length > 255) return 'is too long (maximum is 255 characters)';
  if (!PATH_PATTERN.test(value) || /\.(git|atom)$/i.test(value) || value.endsWith('.') || value.includes('..')) {
    return "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";
  }
  const lower = value.toLowerCase();
  if (internal) return null;
  if ((topLevel ? RESERVED_TOP_LEVEL_NAMES : RESERVED_SUBPATH_NAMES).has(lower)) return 'is a reserved name';
  return null;
}
