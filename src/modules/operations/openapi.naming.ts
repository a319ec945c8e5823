/**
 * operationIds and tags derived from a route's method and path when its schema declares none
 * (docs/decisions.md "OpenAPI document"). The rule is deterministic: a route's derived name
 * depends only on its own method and path, except where two derived names collide.
 */

const word = (segment: string) =>
  segment
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase())
    .join('');

/** English plural to singular, enough for the API's nouns (issues, moves, access_tokens). */
function singular(segment: string): string {
  if (/ies$/.test(segment)) return `${segment.slice(0, -3)}y`;
  if (/(ss|us|settings)$/.test(segment)) return segment;
  return segment.endsWith('s') ? segment.slice(0, -1) : segment;
}

/** Settings and lists of one thing (`/notification_settings`) are read, not listed. */
const isCollection = (segment: string) => segment.endsWith('s') && !/(settings|ss)$/.test(segment);

const isParam = (segment: string) => segment.startsWith('{');

/**
 * `GET /api/v4/projects/{id}/issues` → `listProjectIssues`; `GET …/issues/{issue_iid}` →
 * `getProjectIssue`; `POST …/issues` → `createProjectIssue`; `PUT` → `update…`, `PATCH` →
 * `patch…`, `DELETE` → `delete…`; a POST to a singular word after a parameter is an action named
 * by that word: `POST /users/{id}/block` → `blockUser`, `…/access_tokens/{token_id}/rotate` →
 * `rotateProjectAccessToken`. A static segment followed by a parameter names one item (singular).
 */
export function deriveOperationId(method: string, path: string): string {
  const segments = path
    .replace(/^\/api\/v4(?=\/)/, '')
    .split('/')
    .filter(Boolean);
  const last = segments.at(-1) ?? '';
  const endsWithParam = isParam(last);
  const action = method === 'post' && !endsWithParam && segments.length > 1 && isParam(segments.at(-2) ?? '') && !isCollection(last);
  const nouns = (action ? segments.slice(0, -1) : segments)
    .map((segment, i, all) => {
      if (isParam(segment)) return '';
      const itemOf = isParam(all[i + 1] ?? '') || (i === all.length - 1 && method === 'post');
      return word(itemOf ? singular(segment) : segment);
    })
    .join('');
  let verb: string;
  if (action) verb = word(last);
  else if (method === 'get') verb = !endsWithParam && isCollection(last) ? 'List' : 'Get';
  else verb = { post: 'Create', put: 'Update', patch: 'Patch', delete: 'Delete' }[method] ?? word(method);
  const id = `${verb}${nouns}`;
  return id.charAt(0).toLowerCase() + id.slice(1);
}

/** `…ById`, `…ByUserIdTokenId`: how colliding derived names are told apart. */
export function disambiguate(id: string, path: string): string {
  const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => word(m[1] ?? ''));
  return params.length > 0 ? `${id}By${params.join('')}` : id;
}

/** The area of a route without a declared tag: its first path segment after /api/v4 (`projects`). */
export function deriveTag(path: string): string {
  if (/\/(alerts|prometheus\/alerts)\/notify/.test(path)) return 'alerts';
  if (path.startsWith('/oauth') || path.startsWith('/.well-known')) return 'oauth';
  const first = path
    .replace(/^\/api\/v4(?=\/)/, '')
    .split('/')
    .find((s) => s && !isParam(s));
  return first ?? 'operations';
}
