import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { renderToString } from 'preact-render-to-string';
import { VersionCache } from '../../infra/db/index.js';
import { NotFoundError } from '../../infra/errors/index.js';
import { IntegerId, deepestPage, type ApiApp } from '../../infra/http/index.js';
import { ROLE, sendPage, type Crumb } from '../../web/index.js';
import type { ProjectRow } from '../projects/index.js';
import { Sort, Status } from './error-tracking.schemas.js';
import { STATUS_TABS, errorListBody, errorListPage, errorPage, releasesPage, type ErrorsFrame } from './errors.pages.js';
import { mapReleaseHealth, stackTraceOf } from './errors.presenter.js';
import { errorPagePath, monitorSettingsPath, type ErrorTrackingDeps } from './error-tracking.deps.js';

const PER_PAGE = 20;
const ProjectRef = Type.String({ minLength: 1, maxLength: 1024 });
const ListQuery = Type.Object({
  status: Type.Optional(Type.Union(STATUS_TABS.map((s) => Type.Literal(s)))),
  sort: Type.Optional(Sort),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  environment: Type.Optional(Type.String({ maxLength: 255 })),
  release: Type.Optional(Type.String({ maxLength: 255 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: deepestPage(PER_PAGE) })),
});
const DetailsQuery = Type.Object({ event: Type.Optional(Type.String({ maxLength: 64 })) });
const PageQuery = Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1, maximum: deepestPage(PER_PAGE) })) });
const KeyParams = Type.Object({ project: ProjectRef, key_id: IntegerId });
/** Release health looks back this far (the session counters are kept as long as events). */
const RELEASE_DAYS = 30;
const ProjectParams = Type.Object({ project: ProjectRef });
const ErrorParams = Type.Object({ project: ProjectRef, error_id: IntegerId });
const Token = Type.Optional(Type.String({ maxLength: 256 }));
const StatusForm = Type.Object({ authenticity_token: Token, status: Status });
const ActionForm = Type.Object({ authenticity_token: Token });
// An unticked checkbox sends nothing: `active` absent switches tracking off, `email_notifications` absent the error mails.
const ToggleForm = Type.Object({
  authenticity_token: Token,
  active: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  email_notifications: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
});

const NOTICES: Record<string, string> = {
  resolved: 'The error was marked resolved.',
  ignored: 'The error is now ignored.',
  unresolved: 'The error was reopened.',
};

/** Back to the error tracking section of Settings > Monitor. */
const setupUrl = (project: ProjectRow) => `${monitorSettingsPath(project.full_path)}#error-tracking-settings`;

const queryOf = (request: FastifyRequest) => {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at);
};

/**
 * Monitor > Error tracking at `/<full_path>/-/error_tracking` (`/-/p/:project/error_tracking` on
 * the page layer): the list and one error. Reading needs Reporter, the buttons Developer, as the
 * API. The toggle of Settings > Monitor (a Maintainer's, as the API's settings) posts here too.
 * The former `/-/projects/:id/errors[/:error_id]` answer 301 to those who may read the project.
 */
export function errorPagesRoutes(app: ApiApp, deps: ErrorTrackingDeps): void {
  const { errors, settings } = deps;
  const views = new VersionCache<string>({
    dataVersion: (scope) => deps.platform.database.dataVersion(scope),
    clock: deps.platform.clock,
    ttlMs: 10_000,
    // Only the sparklines age: a list 10 s old is served while the next one is drawn.
    refreshBehind: true,
    maxEntries: 500,
    maxBytes: 8 * 1024 * 1024,
  });

  const resolved = (request: FastifyRequest) => {
    const { row, level } = request.page.project!;
    return { project: row as ProjectRow, level };
  };

  const frame = async (request: FastifyRequest, project: ProjectRow, level: number, crumbs: Crumb[]): Promise<ErrorsFrame> => {
    const trail = await deps.trail(project, request.page.actor, request);
    return {
      page: request.page,
      crumbs: [...trail, { label: project.name, href: `/${project.full_path}` }, { label: 'Monitor' }, ...crumbs],
      nav: { fullPath: project.full_path, name: project.name, level, current: 'errors' },
    };
  };

  app.get(
    '/-/p/:project/error_tracking',
    { schema: { params: ProjectParams, querystring: ListQuery }, config: { page: { signIn: 'required', project: ROLE.reporter } } },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const q = request.query;
      const query = {
        status: q.status ?? 'unresolved',
        sort: q.sort ?? 'last_seen',
        search: q.search?.trim() ?? '',
        environment: q.environment?.trim() ?? '',
        release: q.release?.trim() ?? '',
        page: q.page ?? 1,
      } as const;
      const filter = {
        status: query.status === 'all' ? undefined : query.status,
        search: query.search || undefined,
        environment: query.environment || undefined,
        release: query.release || undefined,
        sort: query.sort,
      };
      // A list is kept as drawn until the next commit to the database (10 s at most, as the
      // sparklines move with the clock): it is read far more often than errors change.
      const canSetUp = level >= ROLE.maintainer;
      const html = await views.through(
        JSON.stringify([project.id, canSetUp, query]),
        async () => {
          const counts = await errors.statusCounts(project.id);
          const plain = !filter.search && !filter.environment && !filter.release;
          const known = !plain
            ? null
            : filter.status === undefined
              ? [...counts.values()].reduce((a, b) => a + b, 0)
              : (counts.get(filter.status) ?? 0);
          const list = await errors.page(project.id, filter, PER_PAGE, (query.page - 1) * PER_PAGE, known);
          // An empty tab of a project that has errors is not the empty state that leads to setup.
          const empty = list.rows.length === 0 && query.page === 1 && [...counts.values()].every((n) => n === 0);
          return renderToString(errorListBody({ project, canSetUp, empty, list, counts, query }));
        },
        (kept) => kept.length,
        request,
      );
      return sendPage(reply, errorListPage({ frame: await frame(request, project, level, [{ label: 'Error tracking' }]), project, html }));
    },
  );

  app.get(
    '/-/p/:project/error_tracking/releases',
    { schema: { params: ProjectParams, querystring: PageQuery }, config: { page: { signIn: 'required', project: ROLE.reporter } } },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const page = request.query.page ?? 1;
      const { rows } = await errors.releaseHealth(project.id, RELEASE_DAYS, PER_PAGE + 1, (page - 1) * PER_PAGE);
      return sendPage(
        reply,
        releasesPage({
          frame: await frame(request, project, level, [
            { label: 'Error tracking', href: errorPagePath(project.full_path) },
            { label: 'Release health' },
          ]),
          project,
          days: RELEASE_DAYS,
          rows: rows.slice(0, PER_PAGE).map(mapReleaseHealth),
          page,
          more: rows.length > PER_PAGE,
          canSetUp: level >= ROLE.maintainer,
        }),
      );
    },
  );

  app.get(
    '/-/p/:project/error_tracking/:error_id/details',
    {
      schema: { params: ErrorParams, querystring: DetailsQuery },
      config: { page: { signIn: 'required', project: ROLE.reporter } },
    },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const error = await errors.find(project.id, request.params.error_id);
      if (!error) throw new NotFoundError('Error');
      const asked = request.query.event?.trim().toLowerCase().replaceAll('-', '') || undefined;
      const [details, chosen] = await Promise.all([errors.details(error), errors.event(error, asked)]);
      // An event id the error does not have: the latest is shown, with a message (404, as a missing page).
      const view = chosen ?? (asked !== undefined ? await errors.event(error, undefined) : undefined);
      const missingEvent = asked !== undefined && chosen === undefined ? asked : null;
      return sendPage(
        reply,
        errorPage({
          frame: await frame(request, project, level, [
            { label: 'Error tracking', href: errorPagePath(project.full_path) },
            { label: error.title.length > 60 ? `${error.title.slice(0, 59)}…` : error.title },
          ]),
          project,
          details,
          view,
          missingEvent,
          trace: stackTraceOf(view?.event.payload),
          canWrite: level >= ROLE.developer,
        }),
        missingEvent === null ? 200 : 404,
      );
    },
  );

  app.post(
    '/-/p/:project/error_tracking/:error_id/details/status',
    { schema: { params: ErrorParams, body: StatusForm }, config: { page: { signIn: 'required', project: ROLE.developer } } },
    async (request, reply) => {
      const { project } = resolved(request);
      const error = await errors.get(project.id, request.params.error_id);
      await errors.setStatus(error, request.body.status);
      return reply.redirectWithFlash(errorPagePath(project.full_path, error.id), { kind: 'notice', text: NOTICES[request.body.status]! });
    },
  );

  app.post(
    '/-/p/:project/error_tracking/:error_id/details/issue',
    { schema: { params: ErrorParams, body: ActionForm }, config: { page: { signIn: 'required', project: ROLE.developer } } },
    async (request, reply) => {
      const { project, level } = resolved(request);
      const error = await errors.get(project.id, request.params.error_id);
      const issue = await errors.createIssue(project, error, request.page.actor!, level);
      return reply.redirectWithFlash(errorPagePath(project.full_path, error.id), {
        kind: 'notice',
        text: `Issue #${issue.iid} was created from this error.`,
      });
    },
  );

  // Settings > Monitor's error tracking toggle: the integrated backend, as the API's PUT.
  app.post(
    '/-/p/:project/settings/operations/error_tracking',
    { schema: { params: ProjectParams, body: ToggleForm }, config: { page: { signIn: 'required', project: ROLE.maintainer } } },
    async (request, reply) => {
      const { project } = resolved(request);
      const active = request.body.active === 'true';
      const email_notifications = request.body.email_notifications === 'true';
      await settings.put(project.id, { active, integrated: true, email_notifications }, { by: request.page.actor, project });
      return reply.redirectWithFlash(setupUrl(project), {
        kind: 'notice',
        text: active ? 'Error tracking is enabled.' : 'Error tracking is disabled.',
      });
    },
  );

  // Client keys on the same page: the spec's rotation (create, confirm in the list, delete the old one).
  app.post(
    '/-/p/:project/settings/operations/error_tracking/client_keys',
    { schema: { params: ProjectParams, body: ActionForm }, config: { page: { signIn: 'required', project: ROLE.maintainer } } },
    async (request, reply) => {
      const { project } = resolved(request);
      const key = await settings.createKey(project.id, { by: request.page.actor, project });
      return reply.redirectWithFlash(setupUrl(project), {
        kind: 'notice',
        text: `Client key ${key.public_key.slice(0, 13)}… was created: its DSN is now the one shown.`,
      });
    },
  );

  app.post(
    '/-/p/:project/settings/operations/error_tracking/client_keys/:key_id/revoke',
    { schema: { params: KeyParams, body: ActionForm }, config: { page: { signIn: 'required', project: ROLE.maintainer } } },
    async (request, reply) => {
      const { project } = resolved(request);
      const key = await settings.deleteKey(project.id, request.params.key_id, { by: request.page.actor, project });
      return reply.redirectWithFlash(setupUrl(project), {
        kind: 'notice',
        text: `Client key ${key.public_key.slice(0, 13)}… was revoked.`,
      });
    },
  );

  // The former addresses, for those who may read the project (a visitor signs in first; others get 404).
  const OldParams = Type.Object({ project: ProjectRef });
  const OldErrorParams = Type.Object({ project: ProjectRef, error_id: IntegerId });
  app.get(
    '/-/projects/:project/errors',
    { schema: { params: OldParams }, config: { page: { signIn: 'optional', project: 0 } } },
    async (request, reply) => reply.redirect(`${errorPagePath(resolved(request).project.full_path)}${queryOf(request)}`, 301),
  );
  app.get(
    '/-/projects/:project/errors/:error_id',
    { schema: { params: OldErrorParams }, config: { page: { signIn: 'optional', project: 0 } } },
    async (request, reply) => reply.redirect(errorPagePath(resolved(request).project.full_path, request.params.error_id), 301),
  );
}
