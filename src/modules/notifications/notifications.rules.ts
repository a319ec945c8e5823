import { DEFAULT_ON_EVENTS, EXCLUDED_WATCHER_EVENTS, PARTICIPATING_EXTRA_EVENTS, type Level } from './notifications.levels.js';
import type { NotificationSettingRow } from './notifications.repository.js';

/** Who took part in the thing being notified about; absent means nobody did. */
export interface Participation {
  /** Users who took part (author, assignee, commenter). */
  participants?: readonly number[] | undefined;
  /** Users mentioned in it. */
  mentioned?: readonly number[] | undefined;
  /** For a single-user question: whether that user took part. */
  participant?: boolean | undefined;
}

function enabled(row: NotificationSettingRow | null, event: string): boolean {
  const value = row ? (row as unknown as Record<string, number | null | undefined>)[event] : undefined;
  if (value === undefined || value === null) return DEFAULT_ON_EVENTS.has(event);
  return value === 1;
}

/** `suitable_notification_level?` of reference §1.7, for one user whose level is already chosen. */
export function decides(
  level: Level,
  row: NotificationSettingRow | null,
  event: string,
  who: { participant: boolean; mentioned: boolean },
): boolean {
  switch (level) {
    case 'disabled':
    case 'global': // a global setting that itself says "global" never notifies
      return false;
    case 'mention':
      return who.mentioned;
    case 'participating':
      return who.participant || who.mentioned || PARTICIPATING_EXTRA_EVENTS.has(event);
    case 'watch':
      return !EXCLUDED_WATCHER_EVENTS.has(event);
    case 'custom':
      return enabled(row, event) || (event === 'fixed_pipeline' && enabled(row, 'success_pipeline')) || who.participant || who.mentioned;
  }
}

/** Why a recipient gets a mail, as the reason header names it (assigned, participating, mentioned, watching, subscribed). */
export type MailReason = 'assigned' | 'participating' | 'mentioned' | 'watching' | 'subscribed';

/** The reason of a recipient `decides` already let through: taking part first, then the level. */
export function reasonOf(level: Level, who: { participant: boolean; mentioned: boolean }): MailReason {
  if (who.mentioned) return 'mentioned';
  if (who.participant) return 'participating';
  if (level === 'watch') return 'watching';
  if (level === 'custom') return 'subscribed';
  return 'participating';
}
