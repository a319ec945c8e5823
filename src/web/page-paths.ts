import { RESERVED_TOP_LEVEL_NAMES } from '../infra/reserved-names.js';

/**
 * The established product's page addresses (`/<full_path>/-/issues/3`, `/groups/<full_path>`,
 * `/<username>`) nest to any depth, which a router's parameters cannot span. They are
 * rewritten before routing to internal addresses with the path as one parameter, so each page
 * is an ordinary route with its schemas and policy:
 *
 *   /<full_path>/-/<rest>          → /-/p/<full_path, slashes as %2F>/<rest>
 *   /groups/<full_path>/-/<rest>   → /-/g/<full_path>/<rest>
 *   /groups/<full_path>            → /-/g/<full_path>
 *   /<path>                        → /-/n/<path>   (a project, a user or a group: the page decides)
 *
 * Only where no route answers the path in any method, so API, OAuth, git and alert-receiver
 * addresses are never touched, and a reserved first segment (`/admin`, `/users`) never is.
 */
export const INTERNAL = { project: '/-/p', group: '/-/g', namespace: '/-/n' } as const;

const SEGMENT = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;
/** Groups nest 20 deep (the established product's limit), plus the project. */
const MAX_DEPTH = 21;

export function rewritePageUrl(url: string, method: string | undefined, isRouted: (path: string) => boolean): string {
  if (url.length > 4096 || url.startsWith('/api/') || url.startsWith('/-/') || url.startsWith('/oauth/')) return url;
  const queryAt = url.indexOf('?');
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  const query = queryAt < 0 ? '' : url.slice(queryAt);
  // Only a page's form posts somewhere other than GET, always under `/-/`: the alert receiver's
  // and git's POSTs leave here before any router lookup.
  const read = method === 'GET' || method === 'HEAD';
  if (!read && !path.includes('/-/')) return url;
  if (path === '/' || isRouted(path)) return url;
  const segments = path.slice(1).split('/');
  if (segments.at(-1) === '') segments.pop();
  const dash = segments.indexOf('-');
  const named = dash < 0 ? segments : segments.slice(0, dash);
  const rest = dash < 0 ? '' : `/${segments.slice(dash + 1).join('/')}`;
  const inGroups = named[0] === 'groups';
  const fullPath = inGroups ? named.slice(1) : named;
  if (fullPath.length === 0 || fullPath.length > MAX_DEPTH || !fullPath.every((s) => SEGMENT.test(s))) return url;
  if (!inGroups && RESERVED_TOP_LEVEL_NAMES.has(fullPath[0]!.toLowerCase())) return url;
  const joined = fullPath.join('%2F');
  if (inGroups) return `${INTERNAL.group}/${joined}${rest}${query}`;
  return dash < 0 ? `${INTERNAL.namespace}/${joined}${query}` : `${INTERNAL.project}/${joined}${rest}${query}`;
}

/**
 * The established address of an internal one (the inverse of `rewritePageUrl`): a moved
 * project's or group's redirect, built from the internal URL, leads to its pretty address.
 */
export function prettyPageUrl(url: string): string {
  const origin = /^https?:\/\/[^/]+/i.exec(url)?.[0] ?? '';
  const rest = url.slice(origin.length);
  const queryAt = rest.indexOf('?');
  const path = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const query = queryAt < 0 ? '' : rest.slice(queryAt);
  const match = /^\/-\/([pgn])\/([^/]+)(\/.*)?$/.exec(path);
  if (!match) return url;
  const [, kind, encoded = '', tail = ''] = match;
  let fullPath: string;
  try {
    fullPath = decodeURIComponent(encoded);
  } catch {
    return url;
  }
  const pretty =
    kind === 'g'
      ? `/groups/${fullPath}${tail ? `/-${tail}` : ''}`
      : kind === 'p'
        ? `/${fullPath}${tail ? `/-${tail}` : ''}`
        : `/${fullPath}`;
  return `${origin}${pretty}${query}`;
}
