// Not in the PostgreSQL tier: HTML pages; the queries behind them are those of the API suites that run there.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createIntegration, notify } from '../helpers/alerts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { TestBrowser } from '../helpers/auth-browser.js';
import { addMember, createGroup, createProject, createUser, type TestUser } from '../helpers/factories.js';
import { enableTracking, exceptionEvent, post, sentryAuth, storePath } from '../helpers/sentry.js';

/**
 * Authorization matrix of the HTML pages (issue 18: "the authorization matrix covers the HTML
 * pages as well as the API"): every page route that concerns a project (and the notification
 * settings page, whose forms name a project or group), called through the real sign-in form by
 * eight kinds of caller on a private and a public project, against an explicit table of least
 * roles. Each row names the API row of authz-matrix.test.ts it mirrors, and the test checks the
 * page never allows more than that row. What a caller may do answers the page (200) or the form's
 * success (its redirect or re-rendered page), never a 5xx; what it cannot see 404; what it sees
 * but may not do 403; an anonymous visitor on a page that needs signing in is sent to sign in.
 */

/** `signed_in`: anyone signed in, whatever their membership. */
type Min = 'signed_in' | 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner';
interface Row {
  /** The route as the app declares it. */
  route: string;
  min: Min;
  /** On a public project, signed-in non-members may use it too ('signed_in'), or anyone ('anyone'). */
  publicUse?: 'signed_in' | 'anyone';
  /** The API row (authz-matrix.test.ts `EXPECTED`) it mirrors; null where there is none. */
  api: string | null;
  /** What success answers. */
  ok: 200 | 201 | 301 | 303;
  url: (w: World, caller: Caller) => string;
  /** Where a 301 leads. */
  location?: (w: World) => string;
  form?: (w: World, caller: Caller) => Record<string, string>;
}

const CALLERS = ['anonymous', 'other', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'] as const;
type Caller = (typeof CALLERS)[number];
const LEVEL: Record<Exclude<Min, 'signed_in'>, number> = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 };
const MEMBER: Record<Caller, number> = {
  anonymous: 0,
  other: 0,
  guest: 10,
  reporter: 20,
  developer: 30,
  maintainer: 40,
  owner: 50,
  admin: 0,
};

interface World {
  visibility: 'private' | 'public';
  projectId: number;
  fullPath: string;
  groupId: number;
  groupPath: string;
  alertIid: number;
  integrationId: number;
  /** A hook with one logged delivery, and one hook per caller so each may delete its own once. */
  hookId: number;
  hookLogId: number;
  hooks: Record<Caller, number>;
  /** The same for the project's group (group hooks: its Owners). */
  groupHookId: number;
  groupHookLogId: number;
  groupHooks: Record<Caller, number>;
  integrationUrl: string;
  /** One error per caller, so each may create its issue once (a second is 409). */
  errors: Record<Caller, number>;
  /** One alert integration per caller, so each may delete its own once (a second is 404). */
  integrations: Record<Caller, number>;
  /** One client key per caller, so each may revoke its own once (a second is 404). */
  keys: Record<Caller, number>;
  /** An issue opened by root (so no caller is its author) and a public snippet of the project. */
  issueIid: number;
  snippetId: number;
}

const P = (w: World) => `/-/projects/${w.projectId}`;
/** A project page's address as the established product names it (`/<full_path>/-/...`). */
const N = (w: World) => `/${w.fullPath}/-`;
/** A group page's address as the established product names it (`/groups/<full_path>/-/...`). */
const G = (w: World) => `/groups/${w.groupPath}/-`;
/** Each allowed caller makes a real change: the statuses alternate. */
const flip = (caller: Caller, a: string, b: string) => (CALLERS.indexOf(caller) % 2 === 0 ? a : b);
/** A former address: 301 to its page for whoever may read the project, as the project's own page. */
const moved = (route: string, url: Row['url'], to: (w: World) => string): Row => ({
  route,
  min: 'guest',
  publicUse: 'anyone',
  api: 'GET /projects/{id}',
  ok: 301,
  url,
  location: to,
});

const TABLE: Row[] = [
  {
    route: 'GET /-/p/:project/activity',
    min: 'guest',
    publicUse: 'anyone',
    api: 'GET /projects/{id}/events',
    ok: 200,
    url: (w) => `${N(w)}/activity`,
  },
  moved(
    'GET /-/projects/:project/activity',
    (w) => `${P(w)}/activity`,
    (w) => `${N(w)}/activity`,
  ),
  {
    route: 'GET /-/p/:project/alert_management',
    min: 'developer',
    api: 'GET /projects/{id}/alert_management/alerts',
    ok: 200,
    url: (w) => `${N(w)}/alert_management`,
  },
  {
    route: 'GET /-/p/:project/alert_management/:iid/details',
    min: 'developer',
    api: 'GET /projects/{id}/alert_management/alerts/{alert_iid}',
    ok: 200,
    url: (w) => `${N(w)}/alert_management/${w.alertIid}/details`,
  },
  {
    route: 'POST /-/p/:project/alert_management/:iid/details/status',
    min: 'developer',
    api: 'PUT /projects/{id}/alert_management/alerts/{alert_iid}',
    ok: 303,
    url: (w) => `${N(w)}/alert_management/${w.alertIid}/details/status`,
    form: (_, caller) => ({ status: flip(caller, 'acknowledged', 'triggered') }),
  },
  // Settings > Monitor is a Maintainer's page, as the established product's settings and the
  // API's integration and error tracking settings endpoints: it lists the integrations (their URLs).
  {
    route: 'GET /-/p/:project/settings/operations',
    min: 'maintainer',
    api: 'GET /projects/{id}/alert_management/integrations',
    ok: 200,
    url: (w) => `${N(w)}/settings/operations`,
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/integrations',
    min: 'maintainer',
    api: 'POST /projects/{id}/alert_management/integrations',
    ok: 201,
    url: (w) => `${N(w)}/settings/operations/alerts/integrations`,
    form: (_, caller) => ({ name: `matrix ${caller}`, type: 'http' }),
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/integrations/:integration_id/test',
    min: 'maintainer',
    api: 'POST /projects/{id}/alert_management/integrations/{integration_id}/test',
    ok: 303,
    url: (w) => `${N(w)}/settings/operations/alerts/integrations/${w.integrationId}/test`,
    form: () => ({ payload: '{"title":"matrix test"}' }),
  },
  {
    route: 'POST /-/p/:project/alert_management/:iid/details/assignee',
    min: 'developer',
    api: 'PUT /projects/{id}/alert_management/alerts/{alert_iid}',
    ok: 303,
    url: (w) => `${N(w)}/alert_management/${w.alertIid}/details/assignee`,
    form: () => ({ assignee_id: '' }),
  },
  // Opening an incident is an issue created by a Developer (the API has no alert route for it).
  {
    route: 'POST /-/p/:project/alert_management/:iid/details/incident',
    min: 'developer',
    api: 'PUT /projects/{id}/alert_management/alerts/{alert_iid}',
    ok: 303,
    url: (w) => `${N(w)}/alert_management/${w.alertIid}/details/incident`,
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/integrations/:integration_id',
    min: 'maintainer',
    api: 'PUT /projects/{id}/alert_management/integrations/{integration_id}',
    ok: 303,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}`,
    form: (_, caller) => ({ name: `matrix ${caller}`, active: '1' }),
  },
  {
    route: 'GET /-/p/:project/settings/operations/alerts/integrations/:integration_id/reset_token',
    min: 'maintainer',
    api: 'POST /projects/{id}/alert_management/integrations/{integration_id}/reset_token',
    ok: 200,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}/reset_token`,
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/integrations/:integration_id/reset_token',
    min: 'maintainer',
    api: 'POST /projects/{id}/alert_management/integrations/{integration_id}/reset_token',
    ok: 200,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}/reset_token`,
    form: () => ({}),
  },
  {
    route: 'GET /-/p/:project/settings/operations/alerts/integrations/:integration_id/mapping',
    min: 'maintainer',
    api: 'PUT /projects/{id}/alert_management/integrations/{integration_id}',
    ok: 200,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}/mapping`,
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/integrations/:integration_id/mapping/sample',
    min: 'maintainer',
    api: 'PUT /projects/{id}/alert_management/integrations/{integration_id}',
    ok: 303,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}/mapping/sample`,
    form: () => ({ payload_example: '{"title":"matrix"}' }),
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/integrations/:integration_id/mapping',
    min: 'maintainer',
    api: 'PUT /projects/{id}/alert_management/integrations/{integration_id}',
    ok: 303,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}/mapping`,
    form: () => ({}),
  },
  {
    route: 'GET /-/p/:project/settings/operations/alerts/integrations/:integration_id/delete',
    min: 'maintainer',
    api: 'DELETE /projects/{id}/alert_management/integrations/{integration_id}',
    ok: 200,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}/delete`,
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/integrations/:integration_id/delete',
    min: 'maintainer',
    api: 'DELETE /projects/{id}/alert_management/integrations/{integration_id}',
    ok: 303,
    url: (w, caller) => `${N(w)}/settings/operations/alerts/integrations/${w.integrations[caller]}/delete`,
    form: () => ({}),
  },
  {
    route: 'POST /-/p/:project/settings/operations/alerts/settings',
    min: 'maintainer',
    api: 'PUT /projects/{id}/alert_management/settings',
    ok: 303,
    url: (w) => `${N(w)}/settings/operations/alerts/settings`,
    form: () => ({ auto_close_incident: '1' }),
  },
  // Settings > Webhooks: a Maintainer's page, as the API's hooks.
  {
    route: 'GET /-/p/:project/hooks',
    min: 'maintainer',
    api: 'GET /projects/{id}/hooks',
    ok: 200,
    url: (w) => `${N(w)}/hooks`,
  },
  {
    route: 'POST /-/p/:project/hooks',
    min: 'maintainer',
    api: 'POST /projects/{id}/hooks',
    ok: 303,
    url: (w) => `${N(w)}/hooks`,
    form: (_, caller) => ({ url: `http://203.0.113.10/pages-${caller}`, push_events: '1' }),
  },
  {
    route: 'GET /-/p/:project/hooks/:hook_id/edit',
    min: 'maintainer',
    api: 'GET /projects/{id}/hooks/{hook_id}',
    ok: 200,
    url: (w) => `${N(w)}/hooks/${w.hookId}/edit`,
  },
  {
    route: 'POST /-/p/:project/hooks/:hook_id',
    min: 'maintainer',
    api: 'PUT /projects/{id}/hooks/{hook_id}',
    ok: 303,
    url: (w) => `${N(w)}/hooks/${w.hookId}`,
    form: (_, caller) => ({ url: `http://203.0.113.10/edited-${caller}`, push_events: '1' }),
  },
  {
    route: 'POST /-/p/:project/hooks/:hook_id/destroy',
    min: 'maintainer',
    api: 'DELETE /projects/{id}/hooks/{hook_id}',
    ok: 303,
    url: (w, caller) => `${N(w)}/hooks/${w.hooks[caller]}/destroy`,
  },
  {
    // A trigger the fixtures have nothing for: the page says so (303 with a message), nothing is sent.
    route: 'POST /-/p/:project/hooks/:hook_id/test/:trigger',
    min: 'maintainer',
    api: 'POST /projects/{id}/hooks/{hook_id}/test/{trigger}',
    ok: 303,
    url: (w) => `${N(w)}/hooks/${w.hookId}/test/confidential_note_events`,
  },
  {
    route: 'GET /-/p/:project/hooks/:hook_id/hook_logs/:log_id',
    min: 'maintainer',
    api: 'GET /projects/{id}/hooks/{hook_id}',
    ok: 200,
    url: (w) => `${N(w)}/hooks/${w.hookId}/hook_logs/${w.hookLogId}`,
  },
  // A group's hooks page: its Owners, as the API's group hooks (Premium and Ultimate; the suite runs on Ultimate).
  {
    route: 'GET /-/g/:group/hooks',
    min: 'owner',
    api: 'GET /groups/{id}/hooks',
    ok: 200,
    url: (w) => `${G(w)}/hooks`,
  },
  {
    route: 'POST /-/g/:group/hooks',
    min: 'owner',
    api: 'POST /groups/{id}/hooks',
    ok: 303,
    url: (w) => `${G(w)}/hooks`,
    form: (_, caller) => ({ url: `http://203.0.113.10/group-pages-${caller}`, push_events: '1' }),
  },
  {
    route: 'GET /-/g/:group/hooks/:hook_id/edit',
    min: 'owner',
    api: 'GET /groups/{id}/hooks/{hook_id}',
    ok: 200,
    url: (w) => `${G(w)}/hooks/${w.groupHookId}/edit`,
  },
  {
    route: 'POST /-/g/:group/hooks/:hook_id',
    min: 'owner',
    api: 'PUT /groups/{id}/hooks/{hook_id}',
    ok: 303,
    url: (w) => `${G(w)}/hooks/${w.groupHookId}`,
    form: (_, caller) => ({ url: `http://203.0.113.10/group-edited-${caller}`, push_events: '1' }),
  },
  {
    route: 'POST /-/g/:group/hooks/:hook_id/destroy',
    min: 'owner',
    api: 'DELETE /groups/{id}/hooks/{hook_id}',
    ok: 303,
    url: (w, caller) => `${G(w)}/hooks/${w.groupHooks[caller]}/destroy`,
  },
  {
    route: 'POST /-/g/:group/hooks/:hook_id/test/:trigger',
    min: 'owner',
    api: 'POST /groups/{id}/hooks/{hook_id}/test/{trigger}',
    ok: 303,
    url: (w) => `${G(w)}/hooks/${w.groupHookId}/test/confidential_note_events`,
  },
  {
    route: 'GET /-/g/:group/hooks/:hook_id/hook_logs/:log_id',
    min: 'owner',
    api: 'GET /groups/{id}/hooks/{hook_id}',
    ok: 200,
    url: (w) => `${G(w)}/hooks/${w.groupHookId}/hook_logs/${w.groupHookLogId}`,
  },
  {
    route: 'POST /-/p/:project/settings/operations/error_tracking',
    min: 'maintainer',
    api: 'PUT /projects/{id}/error_tracking/settings',
    ok: 303,
    url: (w) => `${N(w)}/settings/operations/error_tracking`,
    form: () => ({ active: 'true' }),
  },
  {
    route: 'POST /-/p/:project/settings/operations/error_tracking/client_keys',
    min: 'maintainer',
    api: 'POST /projects/{id}/error_tracking/client_keys',
    ok: 303,
    url: (w) => `${N(w)}/settings/operations/error_tracking/client_keys`,
  },
  {
    route: 'POST /-/p/:project/settings/operations/error_tracking/client_keys/:key_id/revoke',
    min: 'maintainer',
    api: 'DELETE /projects/{id}/error_tracking/client_keys/{key_id}',
    ok: 303,
    url: (w, caller) => `${N(w)}/settings/operations/error_tracking/client_keys/${w.keys[caller]}/revoke`,
  },
  {
    route: 'GET /-/p/:project/error_tracking/releases',
    min: 'reporter',
    api: 'GET /projects/{id}/error_tracking/release_health',
    ok: 200,
    url: (w) => `${N(w)}/error_tracking/releases`,
  },
  {
    route: 'GET /-/p/:project/error_tracking',
    min: 'reporter',
    api: 'GET /projects/{id}/error_tracking/errors',
    ok: 200,
    url: (w) => `${N(w)}/error_tracking`,
  },
  {
    route: 'GET /-/p/:project/error_tracking/:error_id/details',
    min: 'reporter',
    api: 'GET /projects/{id}/error_tracking/errors/{error_id}',
    ok: 200,
    url: (w) => `${N(w)}/error_tracking/${w.errors.owner}/details`,
  },
  {
    route: 'POST /-/p/:project/error_tracking/:error_id/details/status',
    min: 'developer',
    api: 'PUT /projects/{id}/error_tracking/errors/{error_id}',
    ok: 303,
    url: (w, caller) => `${N(w)}/error_tracking/${w.errors[caller]}/details/status`,
    form: (_, caller) => ({ status: flip(caller, 'resolved', 'ignored') }),
  },
  {
    route: 'POST /-/p/:project/error_tracking/:error_id/details/issue',
    min: 'developer',
    api: 'POST /projects/{id}/error_tracking/errors/{error_id}/issue',
    ok: 303,
    url: (w, caller) => `${N(w)}/error_tracking/${w.errors[caller]}/details/issue`,
  },
  moved(
    'GET /-/projects/:project/alerts',
    (w) => `${P(w)}/alerts`,
    (w) => `${N(w)}/alert_management`,
  ),
  moved(
    'GET /-/projects/:project/alerts/:iid',
    (w) => `${P(w)}/alerts/${w.alertIid}`,
    (w) => `${N(w)}/alert_management/${w.alertIid}/details`,
  ),
  moved(
    'GET /-/projects/:project/settings/alerts',
    (w) => `${P(w)}/settings/alerts`,
    (w) => `${N(w)}/settings/operations`,
  ),
  moved(
    'GET /-/projects/:project/errors',
    (w) => `${P(w)}/errors`,
    (w) => `${N(w)}/error_tracking`,
  ),
  moved(
    'GET /-/projects/:project/errors/:error_id',
    (w) => `${P(w)}/errors/${w.errors.owner}`,
    (w) => `${N(w)}/error_tracking/${w.errors.owner}/details`,
  ),
  // The project's own pages, its issues and snippets: the API's rules (a visitor reads a public
  // project; anyone signed in opens and comments on its issues; Reporters close and reopen them).
  { route: 'GET /-/n/:path', min: 'guest', publicUse: 'anyone', api: 'GET /projects/{id}', ok: 200, url: (w) => `/${w.fullPath}` },
  { route: 'GET /-/g/:group', min: 'guest', publicUse: 'anyone', api: 'GET /groups/{id}', ok: 200, url: (w) => `/groups/${w.groupPath}` },
  {
    route: 'GET /-/p/:project/issues',
    min: 'guest',
    publicUse: 'anyone',
    api: 'GET /projects/{id}/issues',
    ok: 200,
    url: (w) => `${N(w)}/issues`,
  },
  {
    route: 'GET /-/p/:project/issues/new',
    min: 'guest',
    publicUse: 'signed_in',
    api: 'POST /projects/{id}/issues',
    ok: 200,
    url: (w) => `${N(w)}/issues/new`,
  },
  {
    route: 'POST /-/p/:project/issues',
    min: 'guest',
    publicUse: 'signed_in',
    api: 'POST /projects/{id}/issues',
    ok: 303,
    url: (w) => `${N(w)}/issues`,
    form: (_, caller) => ({ title: `matrix issue of ${caller}` }),
  },
  {
    route: 'GET /-/p/:project/issues/:iid',
    min: 'guest',
    publicUse: 'anyone',
    api: 'GET /projects/{id}/issues/{issue_iid}',
    ok: 200,
    url: (w) => `${N(w)}/issues/${w.issueIid}`,
  },
  {
    route: 'POST /-/p/:project/issues/:iid/notes',
    min: 'guest',
    publicUse: 'signed_in',
    api: 'POST /projects/{id}/issues/{issue_iid}/notes',
    ok: 303,
    url: (w) => `${N(w)}/issues/${w.issueIid}/notes`,
    form: (_, caller) => ({ body: `seen by ${caller}` }),
  },
  {
    route: 'POST /-/p/:project/issues/:iid/close',
    min: 'reporter',
    api: 'PUT /projects/{id}/issues/{issue_iid}',
    ok: 303,
    url: (w) => `${N(w)}/issues/${w.issueIid}/close`,
  },
  {
    route: 'POST /-/p/:project/issues/:iid/reopen',
    min: 'reporter',
    api: 'PUT /projects/{id}/issues/{issue_iid}',
    ok: 303,
    url: (w) => `${N(w)}/issues/${w.issueIid}/reopen`,
  },
  {
    route: 'POST /-/p/:project/issues/:iid/sidebar',
    min: 'reporter',
    api: 'PUT /projects/{id}/issues/{issue_iid}',
    ok: 303,
    url: (w) => `${N(w)}/issues/${w.issueIid}/sidebar`,
    form: () => ({ due_date: '2031-01-01' }),
  },
  {
    route: 'GET /-/p/:project/snippets/:id',
    min: 'guest',
    publicUse: 'anyone',
    api: 'GET /projects/{id}/snippets/{snippet_id}',
    ok: 200,
    url: (w) => `${N(w)}/snippets/${w.snippetId}`,
  },
  // The user settings pages: each shows the signed-in user's own account, whoever they are.
  ...[
    '/-/user_settings/profile',
    '/-/user_settings/personal_access_tokens',
    '/-/user_settings/password/edit',
    '/-/user_settings/applications',
    '/user_settings/applications',
  ].map((url) => ({ route: `GET ${url}`, min: 'signed_in' as const, api: null, ok: 200 as const, url: () => url })),
  // The notification settings page: the user's own; its source forms follow the API's rule.
  { route: 'GET /-/profile/notifications', min: 'signed_in', api: null, ok: 200, url: () => '/-/profile/notifications' },
  {
    route: 'POST /-/profile/notifications',
    min: 'signed_in',
    api: null,
    ok: 303,
    url: () => '/-/profile/notifications',
    form: () => ({ level: 'watch' }),
  },
  {
    route: 'POST /-/profile/notifications/:kind/:id',
    min: 'guest',
    publicUse: 'signed_in',
    api: 'PUT /projects/{id}/notification_settings',
    ok: 303,
    url: (w) => `/-/profile/notifications/projects/${w.projectId}`,
    form: () => ({ level: 'mention' }),
  },
  {
    route: 'POST /-/profile/notifications/:kind/:id',
    min: 'guest',
    publicUse: 'signed_in',
    api: 'PUT /groups/{id}/notification_settings',
    ok: 303,
    url: (w) => `/-/profile/notifications/groups/${w.groupId}`,
    form: () => ({ level: 'mention' }),
  },
];

type Outcome = 'ok' | 'sign_in' | 404 | 403;

/** What the table allows this caller on a project of this visibility. */
function expected(row: Row, caller: Caller, visibility: World['visibility']): Outcome {
  if (caller === 'admin') return 'ok';
  const isPublic = visibility === 'public';
  if (caller === 'anonymous') return isPublic && row.publicUse === 'anyone' ? 'ok' : 'sign_in';
  if (row.min === 'signed_in' || MEMBER[caller] >= LEVEL[row.min]) return 'ok';
  if (isPublic && row.publicUse) return 'ok';
  return MEMBER[caller] === 0 && !isPublic ? 404 : 403;
}

/** The API's rows, read from authz-matrix.test.ts (importing it would run its suite). */
function apiRules(): Map<string, { min: string; publicUse?: string }> {
  const source = readFileSync(new URL('./authz-matrix.test.ts', import.meta.url), 'utf8');
  const rules = new Map<string, { min: string; publicUse?: string }>();
  for (const m of source.matchAll(/^\s*'([A-Z]+ \/[^']+)': (?:(READ)|R\('(\w+)'(?:, '(\w+)')?\)),$/gm)) {
    rules.set(m[1]!, m[2] ? { min: 'guest', publicUse: 'anyone' } : { min: m[3]!, ...(m[4] ? { publicUse: m[4] } : {}) });
  }
  return rules;
}

/** The app's routes, from Fastify's route tree (`printRoutes`), as `METHOD /path`. */
function appRoutes(tree: string): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack[depth] = (stack[depth - 1] ?? '') + m[2];
    for (const method of m[3]?.split(', ') ?? []) routes.push(`${method} ${stack[depth]}`);
  }
  return routes;
}

describe('authorization matrix of the pages: every project page, every kind of caller', () => {
  let t: TestApp;
  const users = {} as Record<Exclude<Caller, 'anonymous'>, TestUser>;
  const browsers = {} as Record<Caller, TestBrowser>;
  const csrf = {} as Record<Caller, string>;
  const worlds: World[] = [];

  async function world(visibility: World['visibility']): Promise<World> {
    const group = await createGroup(t.app, users.owner, { visibility });
    const project = await createProject(t.app, users.owner, { namespaceId: group.id, visibility });
    for (const role of ['guest', 'reporter', 'developer', 'maintainer'] as const) {
      await addMember(t.app, 'namespace', group.id, users[role], LEVEL[role]);
    }
    const integration = await createIntegration(t, project.id, { name: 'fixture', type: 'http', active: true });
    const alert = await notify(t, integration.url, { title: 'fixture alert' }, { key: integration.token });
    assert.equal(alert.statusCode, 200, alert.body);
    const tracked = await enableTracking(t, project.id);
    for (const caller of CALLERS) {
      const stored = await post(t, storePath(project.id), JSON.stringify(exceptionEvent({ type: `Matrix_${caller}` })), {
        'x-sentry-auth': sentryAuth(tracked.key),
      });
      assert.equal(stored.statusCode, 200, stored.body);
    }
    const list = await t.api('GET', `/projects/${project.id}/error_tracking/errors?per_page=100`);
    const byType = new Map(list.json<{ id: number; type: string }[]>().map((e) => [e.type, e.id]));
    const errors = Object.fromEntries(CALLERS.map((c) => [c, byType.get(`Matrix_${c}`)])) as Record<Caller, number>;
    assert.ok(
      Object.values(errors).every((id) => typeof id === 'number'),
      JSON.stringify([...byType]),
    );
    const integrations = {} as Record<Caller, number>;
    for (const caller of CALLERS)
      integrations[caller] = (await createIntegration(t, project.id, { name: `matrix ${caller}`, type: 'http' })).id;
    const keys = {} as Record<Caller, number>;
    for (const caller of CALLERS) {
      keys[caller] = (await t.api('POST', `/projects/${project.id}/error_tracking/client_keys`)).json<{ id: number }>().id;
    }
    const hookUrl = { body: { url: 'http://203.0.113.10/fixture' } };
    const hookId = (await t.api('POST', `/projects/${project.id}/hooks`, hookUrl)).json<{ id: number }>().id;
    const hooks = {} as Record<Caller, number>;
    for (const caller of CALLERS) hooks[caller] = (await t.api('POST', `/projects/${project.id}/hooks`, hookUrl)).json<{ id: number }>().id;
    const groupHookId = (await t.api('POST', `/groups/${group.id}/hooks`, hookUrl)).json<{ id: number }>().id;
    const groupHooks = {} as Record<Caller, number>;
    for (const caller of CALLERS)
      groupHooks[caller] = (await t.api('POST', `/groups/${group.id}/hooks`, hookUrl)).json<{ id: number }>().id;
    const logOf = (webHookId: number) =>
      t.app.platform.db
        .insertInto('web_hook_logs')
        .values({
          web_hook_id: webHookId,
          trigger: 'push_events',
          url: 'http://203.0.113.10/fixture',
          request_headers: '{}',
          request_data: '{}',
          response_status: '200',
          response_headers: '{}',
          response_body: '',
          execution_duration_ms: 5,
          internal_error_message: null,
          created_at: t.clock.now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
    const groupLog = await logOf(groupHookId);
    const log = await logOf(hookId);
    return {
      integrations,
      hookId,
      hookLogId: Number(log.id),
      hooks,
      groupHookId,
      groupHookLogId: Number(groupLog.id),
      groupHooks,
      keys,
      visibility,
      projectId: project.id,
      fullPath: project.full_path,
      groupId: group.id,
      groupPath: group.full_path,
      issueIid: (await t.api('POST', `/projects/${project.id}/issues`, { body: { title: 'matrix fixture' } })).json().iid,
      snippetId: (
        await t.api('POST', `/projects/${project.id}/snippets`, {
          body: { title: 'matrix fixture', file_name: 'a.txt', content: 'a', visibility: 'public' },
        })
      ).json().id,
      alertIid: alert.json()[0].iid,
      integrationId: integration.id,
      integrationUrl: integration.url,
      errors,
    };
  }

  before(async () => {
    t = await createTestApp();
    for (const role of ['owner', 'guest', 'reporter', 'developer', 'maintainer', 'other'] as const) users[role] = await createUser(t.app);
    users.admin = await createUser(t.app, { admin: true });
    worlds.push(await world('private'), await world('public'));
    for (const [i, caller] of CALLERS.entries()) {
      const browser = new TestBrowser(t.app, `10.0.0.${i + 1}`);
      if (caller === 'anonymous') {
        // A visitor's form token (bound to the pre-session cookie), as a browser would send it.
        csrf[caller] = TestBrowser.csrfOf((await browser.request('GET', '/users/sign_in')).body);
      } else {
        const signedIn = await browser.signIn(users[caller].user.username, 'password-123');
        assert.ok(
          [302, 303].includes(signedIn.statusCode) && signedIn.headers.location !== '/users/sign_in',
          `${caller} signs in: ${signedIn.statusCode} ${signedIn.body}`,
        );
        csrf[caller] = await browser.csrf();
      }
      browsers[caller] = browser;
    }
  });
  after(() => t.close());

  it('the table names every page route under /-/projects, the own pages of projects and groups, issues, snippets, Monitor, Settings > Monitor, Settings > Webhooks, group hooks, activity, /-/profile/notifications and the user settings pages, and nothing else', () => {
    const pages = appRoutes(t.app.printRoutes({ commonPrefix: false }))
      .filter(
        (r) =>
          /^(GET|POST|PUT|PATCH|DELETE) \/-\/(projects\/|profile\/notifications|[ng]\/:|p\/:project\/(alert_management|error_tracking|settings\/operations|hooks|activity|issues|snippets\/:id$))/.test(
            r,
          ) || /^GET (\/-)?\/user_settings\/(profile|personal_access_tokens|password\/edit|applications)$/.test(r),
      )
      .sort();
    assert.deepEqual(pages, [...new Set(TABLE.map((row) => row.route))].sort());
  });

  it('no page allows more than the API row it mirrors', () => {
    const rules = apiRules();
    assert.ok(rules.size > 80, `read ${rules.size} API rows`);
    const rank = ['guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
    const breadth = (use?: string) => (use === 'anyone' ? 2 : use === 'signed_in' ? 1 : 0);
    for (const row of TABLE.filter((r) => r.api !== null)) {
      const api = rules.get(row.api!);
      assert.ok(api, `${row.api} is a row of authz-matrix's EXPECTED`);
      assert.ok(rank.indexOf(row.min) >= rank.indexOf(api.min), `${row.route}: ${row.min} is below the API's ${api.min}`);
      assert.ok(breadth(row.publicUse) <= breadth(api.publicUse), `${row.route}: public use ${row.publicUse} beyond the API's`);
    }
  });

  it('no caller gets more (or less) than its row says, on a private and a public project', async () => {
    const problems: string[] = [];
    const tally = new Map<string, number>();
    for (const row of TABLE) {
      for (const w of worlds) {
        for (const caller of CALLERS) {
          const url = row.url(w, caller);
          const method = row.route.split(' ')[0] as 'GET' | 'POST';
          const res: LightMyRequestResponse = await browsers[caller].request(
            method,
            url,
            method === 'POST' ? { form: { authenticity_token: csrf[caller], ...row.form?.(w, caller) } } : {},
          );
          const want = expected(row, caller, w.visibility);
          tally.set(String(want), (tally.get(String(want)) ?? 0) + 1);
          const location = String(res.headers.location ?? '');
          const where = `${row.route} (${url}) [${w.visibility}] as ${caller}: ${res.statusCode} ${location || res.body.slice(0, 120)}`;
          let good: boolean;
          if (want === 'ok') {
            good = res.statusCode === row.ok && (row.ok !== 303 || !location.startsWith('/users/sign_in'));
            if (good && row.location) good = location === row.location(w);
            if (good && row.ok !== 303 && row.ok !== 301) good = String(res.headers['content-type']).startsWith('text/html');
          } else if (want === 'sign_in') {
            good =
              method === 'GET'
                ? res.statusCode === 302 && location === `/users/sign_in?redirect_to=${encodeURIComponent(url)}`
                : res.statusCode === 303 && location === '/users/sign_in';
          } else {
            // A refusal for the caller's role, not for its form token (the alert pages answer 403 to both).
            good = res.statusCode === want && !/form has expired|session has expired/i.test(res.body);
          }
          if (!good) problems.push(`${where} (expected ${want === 'ok' ? row.ok : want})`);
          // The settings page shows integrations (their URLs) only to those the API shows them to.
          if (row.route === 'GET /-/p/:project/settings/operations' && res.statusCode === 200) {
            const maySee = caller === 'admin' || MEMBER[caller] >= LEVEL.maintainer;
            if (res.body.includes(w.integrationUrl) !== maySee) problems.push(`${where}: integration URL shown = ${!maySee}`);
          }
        }
      }
    }
    // Both sides of the table were exercised.
    for (const outcome of ['ok', 'sign_in', '404', '403']) assert.ok((tally.get(outcome) ?? 0) >= 10, JSON.stringify([...tally]));
    assert.deepEqual(problems, []);
  });
});
