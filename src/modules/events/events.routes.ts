import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireActor, type Actor } from '../../infra/auth/index.js';
import type { VersionCache } from '../../infra/db/index.js';
import { NotFoundError } from '../../infra/errors/index.js';
import { pageOf, paginationHeaders, weakEtag, type ApiApp, type Page } from '../../infra/http/index.js';
import type { UsersService } from '../identity/index.js';
import type { ProjectLookup } from '../projects/index.js';
import { mapEvent, userIdsOf } from './events.presenter.js';
import * as S from './events.schemas.js';
import { parseFilter, type EventDetail, type EventsService } from './events.service.js';

export interface EventsRouteDeps {
  service: EventsService;
  users: UsersService;
  lookup: ProjectLookup;
  externalUrl: string;
  /** Whole answers, kept until the database changes (docs/decisions.md "Events"). */
  answers: VersionCache<EventsAnswer>;
}

/** One list answer as sent: body, its ETag and the pagination headers. */
export interface EventsAnswer {
  body: string;
  headers: Record<string, string>;
}

/**
 * Who is asking, as far as an events answer can depend on it: the user and whether an
 * administrator (levels and visibility), and a job token's project (it reaches only that one).
 */
function viewerKey(actor: Actor | null): string {
  if (!actor) return '-';
  const job = actor.credential.kind === 'job_token' ? `:job${String(actor.credential.projectId)}` : '';
  return `${String(actor.user.id)}:${actor.user.isAdmin ? 'admin' : ''}${job}`;
}

/** SPEC "Activity events": read-only lists; a `read_user` token may read the user lists. */
export function eventsRoutes(app: ApiApp, deps: EventsRouteDeps): void {
  const { service, users, lookup, externalUrl: base, answers } = deps;
  const tags = ['events'];
  const present = async (rows: EventDetail[], projectList: boolean) => {
    const byId = await users.mapByIds(userIdsOf(rows));
    return rows.map((e) => mapEvent(e, byId, base, projectList));
  };
  /**
   * Runs `list` and presents its page, or answers what the same viewer got for the same URL
   * while nothing in the database has changed. The URL holds the source, filters and page.
   * `list` includes the lookups (the project and its visibility, the user), whose outcome
   * depends only on the database and the viewer, so a kept answer skips them too. What is not
   * in the database, the credential and its scopes, is checked before, on every request.
   */
  const answer = async (
    request: FastifyRequest,
    reply: FastifyReply,
    page: Page,
    projectList: boolean,
    list: () => Promise<{ rows: EventDetail[]; total: number }>,
  ) => {
    const key = `${viewerKey(request.actor)} ${request.url}`;
    const kept = await answers.through(
      key,
      async () => {
        const result = await list();
        // The route's response schema writes it (fast-json-stringify, which returns a string):
        // what is kept is what the schema lets through.
        const body = reply.serialize(await present(result.rows, projectList)) as string;
        return { body, headers: { ...paginationHeaders(request, page, result.total, base), etag: weakEtag(body) } };
      },
      (value) => value.body.length + key.length,
      request,
    );
    return reply.headers(kept.headers).type('application/json; charset=utf-8').send(kept.body);
  };

  app.get(
    '/events',
    {
      schema: { summary: "Lists the caller's activity events", tags, querystring: S.OwnEventsQuery, response: { 200: S.EventList } },
      config: { policy: { auth: 'required', scopes: ['read_user'] } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const filter = parseFilter(request.query);
      const page = pageOf(request.query);
      return answer(request, reply, page, false, async () =>
        request.query.scope === 'all'
          ? service.listForMember(actor, filter, page.limit, page.offset)
          : service.listForUser(actor, await users.get(actor.user.id), filter, page.limit, page.offset),
      );
    },
  );

  app.get(
    '/users/:id/events',
    {
      schema: {
        summary: "Lists a user's activity events the caller may see",
        tags,
        params: S.UserParams,
        querystring: S.EventsListQuery,
        response: { 200: S.EventList },
      },
      config: { policy: { auth: 'optional', scopes: ['read_user'] } },
    },
    async (request, reply) => {
      const filter = parseFilter(request.query);
      const page = pageOf(request.query);
      return answer(request, reply, page, false, async () => {
        const user = await users.findByIdOrUsername(request.params.id);
        if (!user) throw new NotFoundError('User');
        return service.listForUser(request.actor, user, filter, page.limit, page.offset);
      });
    },
  );

  app.get(
    '/projects/:id/events',
    // SPEC "Activity events": every events list takes `read_user` (the reference's product does not here; the spec wins).
    {
      schema: {
        summary: "Lists a project's activity events the caller may see",
        tags,
        params: S.ProjectParams,
        querystring: S.EventsListQuery,
        response: { 200: S.EventList },
      },
      config: { policy: { auth: 'optional', scopes: ['read_user'] } },
    },
    async (request, reply) => {
      const filter = parseFilter(request.query);
      const page = pageOf(request.query);
      return answer(request, reply, page, true, async () => {
        const { project, level } = await lookup.project(request, request.params.id);
        return service.listForProject(request.actor, project, level, filter, page.limit, page.offset);
      });
    },
  );
}
