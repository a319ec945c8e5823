/**
 * When a failing hook stops being called, as the established product decides (its
 * WebHooks::AutoDisabling): after four failures in a row the hook is disabled for a minute,
 * each further failure after that doubles the wait (at most a day), and after forty failures in
 * a row it stays disabled until someone re-enables it (a successful test or an edit). One
 * success clears it all.
 */
export const FAILURE_THRESHOLD = 3;
export const PERMANENT_FAILURE_THRESHOLD = 39;
export const INITIAL_BACKOFF_MS = 60_000;
export const MAX_BACKOFF_MS = 86_400_000;

export const ALERT_STATUSES = ['executable', 'temporarily_disabled', 'permanently_disabled'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

export interface FailureState {
  recent_failures: number;
  backoff_count: number;
  disabled_until: number | null;
  permanently_disabled: number;
}

export const CLEARED: FailureState = { recent_failures: 0, backoff_count: 0, disabled_until: null, permanently_disabled: 0 };

export function alertStatus(state: FailureState, now: number): AlertStatus {
  if (state.permanently_disabled === 1) return 'permanently_disabled';
  if (state.disabled_until !== null && state.disabled_until > now) return 'temporarily_disabled';
  return 'executable';
}

/** The hook's state after one more failed delivery at `now`. */
export function afterFailure(state: FailureState, now: number): FailureState {
  const failures = state.recent_failures + 1;
  if (failures > PERMANENT_FAILURE_THRESHOLD) return { ...state, recent_failures: failures, disabled_until: null, permanently_disabled: 1 };
  if (failures <= FAILURE_THRESHOLD) return { ...state, recent_failures: failures };
  const backoffCount = state.backoff_count + 1;
  const wait = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (backoffCount - 1));
  return { recent_failures: failures, backoff_count: backoffCount, disabled_until: now + wait, permanently_disabled: 0 };
}

/** Retries of one delivery: a minute after the first failure, then doubling (the first retry within a minute or two). */
export const DELIVERY_ATTEMPTS = 5;
export function deliveryBackoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** Math.max(0, attempt - 1));
}
