import { NotFoundError, UnauthorizedError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
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
}

/** SPEC "Activity events": read-only lists; a `read_user` token may read the user lists. */
export function eventsRoutes(app: ApiApp, deps: EventsRouteDeps): void {
  const { service, users, lookup, externalUrl: base } = deps;
  const present = async (rows: EventDetail[], projectList: boolean) => {
    const byId = await users.mapByIds(userIdsOf(rows));
    return rows.map((e) => mapEvent(e, byId, base, projectList));
  };

  app.get(
    '/events',
    { schema: { querystring: S.OwnEventsQuery }, config: { policy: { auth: 'required', scopes: ['read_user'] } } },
    async (request, reply) => {
      const actor = request.actor;
      if (!actor) throw new UnauthorizedError();
      const filter = parseFilter(request.query);
      const page = pageOf(request.query);
      const result =
        request.query.scope === 'all'
          ? await service.listForMember(actor, filter, page.limit, page.offset)
          : await service.listForUser(actor, await users.get(actor.user.id), filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, result.total, base);
      return present(result.rows, false);
    },
  );

  app.get(
    '/users/:id/events',
    { schema: { params: S.UserParams, querystring: S.EventsListQuery }, config: { policy: { auth: 'optional', scopes: ['read_user'] } } },
    async (request, reply) => {
      const filter = parseFilter(request.query);
      const user = await users.findByIdOrUsername(request.params.id);
      if (!user) throw new NotFoundError('User');
      const page = pageOf(request.query);
      const result = await service.listForUser(request.actor, user, filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, result.total, base);
      return present(result.rows, false);
    },
  );

  app.get(
    '/projects/:id/events',
    { schema: { params: S.ProjectParams, querystring: S.EventsListQuery }, config: { policy: { auth: 'optional' } } },
    async (request, reply) => {
      const { project, level } = await lookup.project(request, request.params.id);
      const filter = parseFilter(request.query);
      const page = pageOf(request.query);
      const result = await service.listForProject(request.actor, project, level, filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, result.total, base);
      return present(result.rows, true);
    },
  );
}
