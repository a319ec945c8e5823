import type { Tier } from '../../config/index.js';

/** SPEC "Notification setting": the six levels, in the order pages show them. */
export const LEVELS = ['global', 'watch', 'participating', 'mention', 'custom', 'disabled'] as const;
export type Level = (typeof LEVELS)[number];

/** Level of a user's global setting until they choose one (reference §1.5). */
export const DEFAULT_GLOBAL_LEVEL: Level = 'participating';
/** Level of a group or project setting nobody has saved (reference §1.5). */
export const DEFAULT_SOURCE_LEVEL: Level = 'global';

/** The events every tier has, in the established order (reference §1.6). */
export const CORE_EVENTS = [
  'new_release',
  'new_note',
  'new_issue',
  'reopen_issue',
  'close_issue',
  'reassign_issue',
  'issue_due',
  'new_merge_request',
  'push_to_merge_request',
  'reopen_merge_request',
  'close_merge_request',
  'reassign_merge_request',
  'change_reviewer_merge_request',
  'merge_merge_request',
  'failed_pipeline',
  'fixed_pipeline',
  'success_pipeline',
  'moved_project',
  'merge_when_pipeline_succeeds',
] as const;

/** Every event name of SPEC "Notification setting". */
export const ALL_EVENTS = [...CORE_EVENTS, 'new_epic', 'approver'] as const;
export type NotificationEvent = (typeof ALL_EVENTS)[number];

export type SourceKind = 'global' | 'namespace' | 'project';

/** Only Premium and Ultimate have epics (SPEC "Tier notes"). */
export const tierHasEpics = (tier: Tier): boolean => tier !== 'free';

/**
 * The events a setting of this kind carries (reference §1.6): epics live on groups, approvals
 * on projects, and the global setting has both.
 */
export function eventsFor(kind: SourceKind, tier: Tier): NotificationEvent[] {
  const epic: NotificationEvent[] = tierHasEpics(tier) ? ['new_epic'] : [];
  if (kind === 'namespace') return [...CORE_EVENTS, ...epic];
  if (kind === 'project') return [...CORE_EVENTS, 'approver'];
  return [...CORE_EVENTS, ...epic, 'approver'];
}

/** `watch` gets everything except these (reference §1.6 EXCLUDED_WATCHER_EVENTS). */
export const EXCLUDED_WATCHER_EVENTS: ReadonlySet<string> = new Set(['push_to_merge_request', 'issue_due', 'success_pipeline', 'approver']);
/** `participating` also gets these without having taken part (reference §1.7). */
export const PARTICIPATING_EXTRA_EVENTS: ReadonlySet<string> = new Set(['failed_pipeline', 'fixed_pipeline', 'moved_project']);
/** Under `custom`, an unset (NULL) pipeline failure/fix reads as on (reference §1.5). */
export const DEFAULT_ON_EVENTS: ReadonlySet<string> = new Set(['failed_pipeline', 'fixed_pipeline']);

// Grape's boolean spellings are read in one place for every route (issue 19).
export { parseBooleanParam } from '../../infra/http/index.js';

export const isLevel = (value: string): value is Level => (LEVELS as readonly string[]).includes(value);
