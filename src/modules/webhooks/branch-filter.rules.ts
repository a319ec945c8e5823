import type { BranchFilterStrategy } from '../../infra/db/tables/webhooks.js';

/** A glob of the established product's branch filter: `*` matches any run of characters (slashes included). */
function wildcardMatches(pattern: string, branch: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(branch);
}

/** Longest regular-expression filter accepted (patterns are the maintainer's; kept short so matching stays cheap). */
export const REGEX_FILTER_MAX = 255;

/** Whether a push to `branch` triggers a hook with this filter (an empty wildcard filter means every branch). */
export function branchMatches(strategy: BranchFilterStrategy, filter: string | null, branch: string): boolean {
  if (strategy === 'all_branches' || filter === null || filter.trim() === '') return true;
  if (strategy === 'regex') {
    try {
      return new RegExp(filter).test(branch);
    } catch {
      return false;
    }
  }
  return filter
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .some((p) => (p.includes('*') ? wildcardMatches(p, branch) : p === branch));
}

/**
 * A group that repeats and holds a repetition itself (`(a+)+`, `(\w*)*`, `(a|a?)+`): the shapes
 * whose backtracking grows exponentially. JavaScript's engine has no RE2 (which the established
 * product uses), so such patterns are refused when saved rather than run on every push.
 */
const NESTED_REPETITION = /\((?:[^()\\]|\\.)*(?:[+*?]|\{\d+,?\d*\})(?:[^()\\]|\\.)*\)(?:[+*]|\{\d+,\d*\})/;

/** A reason the filter is refused, or null. */
export function checkBranchFilter(strategy: BranchFilterStrategy, filter: string | null | undefined): string | null {
  if (strategy !== 'regex' || !filter) return null;
  if (filter.length > REGEX_FILTER_MAX) return `is too long (maximum is ${REGEX_FILTER_MAX} characters)`;
  try {
    new RegExp(filter);
  } catch {
    return 'is not a valid regular expression';
  }
  return NESTED_REPETITION.test(filter) ? 'must not repeat a group that itself repeats (it could take exponential time)' : null;
}
