import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import { AppError } from '../../infra/errors/index.js';
import { IntegerId, NamespaceOrProjectId, deepestPage, type ApiApp } from '../../infra/http/index.js';
import { sendPage } from '../../web/layout.js';
import type { PageAuth } from '../identity/index.js';
import { AccessLevel, type ProjectRow } from '../projects/index.js';
import { Sort, Status } from './error-tracking.schemas.js';
import { STATUS_TABS, errorListPage, errorPage, messagePage } from './errors.pages.js';
import { stackTraceOf } from './errors.presenter.js';
import { errorPagePath, type ErrorTrackingDeps } from './error-tracking.deps.js';

const PER_PAGE = 20;
const ListQuery = Type.Object({
  status: Type.Optional(Type.Union(STATUS_TABS.map((s) => Type.Literal(s)))),
  sort: Type.Optional(Sort),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: deepestPage(PER_PAGE) })),
});
const ProjectParams = Type.Object({ id: NamespaceOrProjectId });
const ErrorParams = Type.Object({ id: NamespaceOrProjectId, error_id: IntegerId });
const PageQuery = Type.Object({ notice: Type.Optional(Type.String({ maxLength: 40 })) });
const StatusForm = Type.Object({ status: Status });
// Pages resolve the session themselves through identity's PageAuth (auth 'none' skips the API hook).
const policy = { auth: 'none' } as const;

const NOTICES: Record<string, string> = {
  resolved: 'The error was marked resolved.',
  ignored: 'The error is now ignored.',
  unresolved: 'The error was reopened.',
  issue: 'An issue was created from this error.',
};

/**
 * The error list and error page (issue "Views"), under `/-/projects/:id/errors`, a path no
 * project can take. Reading needs Reporter; the buttons need Developer, as the API does.
 */
export function errorPagesRoutes(app: ApiApp, deps: ErrorTrackingDeps & { pageAuth: PageAuth }): void {
  const { pageAuth, lookup, errors } = deps;

  /** The signed-in actor with the project, or null when a redirect or a refusal page was sent. */
  const open = async (
    request: FastifyRequest,
    reply: FastifyReply,
    ref: string,
    minLevel: number,
  ): Promise<{ actor: Actor; project: ProjectRow; level: number; csrf: string } | null> => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return null;
    request.actor = actor;
    const csrf = pageAuth.pageCsrf(request, reply);
    try {
      const { project, level } = await lookup.project(request, ref, minLevel);
      return { actor, project, level, csrf };
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500 || error.status === 301) throw error;
      const title = error.status === 403 ? 'Forbidden' : 'Not found';
      const message = error.status === 403 ? 'You are not allowed to do this.' : 'This project does not exist or you cannot see it.';
      sendPage(reply, messagePage(title, message, actor.user.username, csrf), error.status === 403 ? 403 : 404);
      return null;
    }
  };

  app.get(
    '/-/projects/:id/errors',
    { schema: { params: ProjectParams, querystring: ListQuery }, config: { policy } },
    async (request, reply) => {
      const ctx = await open(request, reply, request.params.id, AccessLevel.REPORTER);
      if (!ctx) return reply;
      const status = request.query.status ?? 'unresolved';
      const sort = request.query.sort ?? 'last_seen';
      const search = request.query.search?.trim() ?? '';
      const page = request.query.page ?? 1;
      const filter = { status: status === 'all' ? undefined : status, search: search || undefined, sort };
      const { rows, total, users } = await errors.list(ctx.project.id, filter, PER_PAGE, (page - 1) * PER_PAGE);
      const totalPages = Math.max(1, Math.ceil(total / PER_PAGE));
      return sendPage(
        reply,
        errorListPage({
          project: ctx.project,
          username: ctx.actor.user.username,
          csrf: ctx.csrf,
          rows,
          users,
          status,
          sort,
          search,
          page,
          totalPages,
          total,
        }),
      );
    },
  );

  app.get(
    '/-/projects/:id/errors/:error_id',
    { schema: { params: ErrorParams, querystring: PageQuery }, config: { policy } },
    async (request, reply) => {
      const ctx = await open(request, reply, request.params.id, AccessLevel.REPORTER);
      if (!ctx) return reply;
      const error = await errors.find(ctx.project.id, request.params.error_id);
      if (!error) return sendPage(reply, messagePage('Not found', 'This error does not exist.', ctx.actor.user.username, ctx.csrf), 404);
      const details = await errors.details(error);
      return sendPage(
        reply,
        errorPage({
          project: ctx.project,
          username: ctx.actor.user.username,
          csrf: ctx.csrf,
          details,
          trace: stackTraceOf(details.latest?.payload),
          canWrite: ctx.level >= AccessLevel.DEVELOPER,
          notice: NOTICES[request.query.notice ?? ''],
        }),
      );
    },
  );

  /** Form posts: CSRF first (422 page), then Developer access, then the change and a 303 back. */
  const action = async (
    request: FastifyRequest<{ Params: { id: string; error_id: number } }>,
    reply: FastifyReply,
    run: (ctx: { actor: Actor; project: ProjectRow; level: number }, errorId: number) => Promise<string>,
  ) => {
    const ctx = await open(request, reply, request.params.id, AccessLevel.DEVELOPER);
    if (!ctx) return reply;
    if (!pageAuth.verifyPageCsrf(request)) {
      return sendPage(
        reply,
        messagePage('Expired form', 'The form expired. Go back, reload the page and try again.', ctx.actor.user.username, ctx.csrf),
        422,
      );
    }
    const error = await errors.find(ctx.project.id, request.params.error_id);
    if (!error) return sendPage(reply, messagePage('Not found', 'This error does not exist.', ctx.actor.user.username, ctx.csrf), 404);
    try {
      const notice = await run(ctx, error.id);
      return reply.redirect(`${errorPagePath(ctx.project.id, error.id)}?notice=${notice}`, 303);
    } catch (failure) {
      if (!(failure instanceof AppError) || failure.status >= 500) throw failure;
      const message = failure.message.replace(/^\d{3} [A-Za-z ]+ - /, '');
      return sendPage(reply, messagePage('Not possible', message, ctx.actor.user.username, ctx.csrf), failure.status);
    }
  };

  app.post(
    '/-/projects/:id/errors/:error_id/status',
    { schema: { params: ErrorParams, body: StatusForm }, config: { policy } },
    async (request, reply) =>
      action(request, reply, async (ctx, errorId) => {
        await errors.setStatus(await errors.get(ctx.project.id, errorId), request.body.status);
        return request.body.status;
      }),
  );

  app.post('/-/projects/:id/errors/:error_id/issue', { schema: { params: ErrorParams }, config: { policy } }, async (request, reply) =>
    action(request, reply, async (ctx, errorId) => {
      await errors.createIssue(ctx.project, await errors.get(ctx.project.id, errorId), ctx.actor, ctx.level);
      return 'issue';
    }),
  );
}
