/** Action integers of reference §2.5 (the `action` filter takes the names). */
export const ACTIONS = {
  created: 1,
  updated: 2,
  closed: 3,
  reopened: 4,
  pushed: 5,
  commented: 6,
  merged: 7,
  joined: 8,
  left: 9,
  destroyed: 10,
  expired: 11,
  approved: 12,
} as const;
export type ActionName = keyof typeof ACTIONS;

/**
 * `target_type` filter values and the class names stored on events. SPEC "Events" lists epic
 * among them; the rest come from reference §2.2.
 */
export const TARGET_TYPES: Readonly<Record<string, string>> = {
  epic: 'Epic',
  issue: 'Issue',
  merge_request: 'MergeRequest',
  milestone: 'Milestone',
  note: 'Note',
  project: 'Project',
  snippet: 'Snippet',
  user: 'User',
  wiki: 'WikiPage::Meta',
  design: 'DesignManagement::Design',
};

/** Never shown in user lists (SPEC "Activity events": epic and merge-request events are excluded). */
export const EXCLUDED_FROM_USER_LISTS = ['Epic', 'MergeRequest'] as const;

/** `Event#action_name` of reference §2.5, first match wins. */
export function actionName(action: number, targetType: string | null, pushAction: string | null): string {
  switch (action) {
    case ACTIONS.pushed:
      return pushAction === 'created' ? 'pushed new' : pushAction === 'removed' ? 'deleted' : 'pushed to';
    case ACTIONS.closed:
      return 'closed';
    case ACTIONS.merged:
      return 'accepted';
    case ACTIONS.joined:
      return 'joined';
    case ACTIONS.left:
      return 'left';
    case ACTIONS.expired:
      return 'removed due to membership expiration from';
    case ACTIONS.destroyed:
      return 'destroyed';
    case ACTIONS.commented:
      return 'commented on';
    case ACTIONS.approved:
      return 'approved';
    case ACTIONS.created:
      return targetType === null ? 'created' : 'opened';
    default:
      return 'opened';
  }
}
