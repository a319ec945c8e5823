import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { requireActor } from '../../infra/auth/index.js';
import { AccessLevel, Issue as IssueSchema, mapIssue, type ProjectRow } from '../projects/index.js';
import { mapError, mapErrorDetails, mapEvent, mapReleaseHealth } from './errors.presenter.js';
import * as S from './error-tracking.schemas.js';
import { errorPagePath, type ErrorTrackingDeps } from './error-tracking.deps.js';

/**
 * The errors REST endpoints of DESIGN.md §4. Reading needs Reporter (as the established
 * product's error views do); changing status and opening issues needs Developer.
 */
export function errorsRoutes(app: ApiApp, deps: ErrorTrackingDeps): void {
  const { lookup, errors, users, platform } = deps;
  const base = platform.config.externalUrl;
  const policy = { auth: 'required' } as const;
  const tags = ['error_tracking'];
  const webUrl = (project: ProjectRow, errorId: number) => `${base}${errorPagePath(project.full_path, errorId)}`;

  app.get(
    '/projects/:id/error_tracking/errors',
    {
      schema: {
        summary: "Lists the project's tracked errors",
        tags,
        params: S.RefParams,
        querystring: S.ListErrorsQuery,
        response: { 200: S.ErrorList },
      },
      config: { policy },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.REPORTER);
      const q = request.query;
      const page = pageOf(q);
      const filter = { status: q.status, search: q.search?.trim() || undefined, sort: q.sort ?? 'last_seen' } as const;
      const { rows, total, users: counts } = await errors.list(project.id, filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((row) => mapError(row, counts.get(row.id) ?? 0, webUrl(project, row.id)));
    },
  );

  app.get(
    '/projects/:id/error_tracking/errors/:error_id',
    {
      schema: {
        summary: 'Shows a tracked error with its frequency, latest event and stack trace',
        tags,
        params: S.ErrorParams,
        response: { 200: S.ErrorDetails },
      },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.REPORTER);
      const error = await errors.get(project.id, request.params.error_id);
      return mapErrorDetails(await errors.details(error), webUrl(project, error.id));
    },
  );

  app.get(
    '/projects/:id/error_tracking/errors/:error_id/events',
    {
      schema: {
        summary: "Lists a tracked error's events, newest first",
        tags,
        params: S.ErrorParams,
        querystring: S.PaginationOnly,
        response: { 200: S.EventList },
      },
      config: { policy },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.REPORTER);
      const error = await errors.get(project.id, request.params.error_id);
      const page = pageOf(request.query);
      const { rows, total } = await errors.events(error.id, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((row) => mapEvent(row));
    },
  );

  app.put(
    '/projects/:id/error_tracking/errors/:error_id',
    {
      schema: {
        summary: "Changes a tracked error's status",
        tags,
        params: S.ErrorParams,
        body: S.UpdateErrorBody,
        response: { 200: S.ErrorDetails },
      },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      const error = await errors.get(project.id, request.params.error_id);
      const updated = await errors.setStatus(error, request.body.status);
      return mapErrorDetails(await errors.details(updated), webUrl(project, updated.id));
    },
  );

  app.post(
    '/projects/:id/error_tracking/errors/:error_id/issue',
    {
      schema: {
        summary: 'Opens an issue from a tracked error',
        operationId: 'createProjectErrorTrackingErrorIssue',
        tags,
        params: S.ErrorParams,
        response: { 201: IssueSchema },
      },
      config: { policy },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const { project, level } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      const error = await errors.get(project.id, request.params.error_id);
      const issue = await errors.createIssue(project, error, actor, level);
      return reply.code(201).send(mapIssue(issue, project, base, await users.mapByIds([issue.author_id])));
    },
  );

  app.get(
    '/projects/:id/error_tracking/release_health',
    {
      schema: {
        summary: 'Lists session counts per release and environment',
        tags,
        params: S.RefParams,
        querystring: S.ReleaseHealthQuery,
        response: { 200: S.ReleaseHealthList },
      },
      config: { policy },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.REPORTER);
      const page = pageOf(request.query);
      const { rows, total } = await errors.releaseHealth(project.id, request.query.days ?? 30, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map(mapReleaseHealth);
    },
  );
}
