import { checkUnmodifiedSince, pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import type { Static } from '@sinclair/typebox';
import { type Actor, requireActor } from '../../infra/auth/index.js';
import { AccessLevel } from './access.policy.js';
import { projectFilter, simpleProject } from './project-filters.rules.js';
import { mapGroup, mapProject } from './projects.presenter.js';
import * as E from './entities.schemas.js';
import * as S from './projects.schemas.js';
import type { ProjectsRouteDeps } from './projects.deps.js';

export function groupsRoutes(app: ApiApp, deps: ProjectsRouteDeps): void {
  const { platform, access, lookup, groups, projects } = deps;
  const base = platform.config.externalUrl;
  const tags = ['groups'];
  /** Every filter the group lists declare, applied (issue 19). */
  const groupFilter = (query: Static<typeof S.ListSubgroupsQuery>, actor: Actor | null, now: number) => {
    const userId = actor?.user.id ?? null;
    return {
      scope: access.listScope(actor),
      ...(query.search ? { search: query.search } : {}),
      memberOf: [
        // `owned`: groups the caller is a direct Owner of (the established product's `owned_groups`).
        ...(query.owned ? [{ userId, minAccess: AccessLevel.OWNER, direct: true, now }] : []),
        // `all_available=false`: only the groups the caller's memberships reach.
        ...(query.all_available === false ? [{ userId, minAccess: 0, direct: false, now }] : []),
      ],
    };
  };
  const parentNames = async (group: Parameters<typeof mapGroup>[0]) =>
    (await groups.ancestry(group)).filter((g) => g.id !== group.id).map((g) => g.name);

  app.post(
    '/groups',
    {
      schema: { summary: 'Creates a group', tags, body: S.CreateGroupBody, response: { 201: E.Group } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const group = await groups.create(requireActor(request), request.body);
      return reply.code(201).send(mapGroup(group, base, await parentNames(group)));
    },
  );

  app.get(
    '/groups',
    {
      schema: { summary: 'Lists the groups the caller can see', tags, querystring: S.ListGroupsQuery, response: { 200: E.GroupList } },
      config: { policy: { auth: 'optional' } },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const { rows, total } = await groups.list(
        {
          ...groupFilter(request.query, request.actor, platform.clock.now()),
          ...(request.query.top_level_only ? { topLevelOnly: true } : {}),
        },
        page.limit,
        page.offset,
      );
      setPaginationHeaders(request, reply, page, total, base);
      return Promise.all(rows.map(async (g) => mapGroup(g, base, await parentNames(g))));
    },
  );

  app.get(
    '/groups/:id',
    {
      schema: { summary: 'Shows a group, by id or full path', tags, params: S.RefParams, response: { 200: E.Group } },
      config: { policy: { auth: 'optional' } },
    },
    async (request) => {
      const { group } = await lookup.group(request, request.params.id);
      return mapGroup(group, base, await parentNames(group));
    },
  );

  app.put(
    '/groups/:id',
    {
      schema: { summary: 'Changes a group', tags, params: S.RefParams, body: S.UpdateGroupBody, response: { 200: E.Group } },
      config: { policy: { auth: 'required' } },
    },
    async (request) => {
      const { group } = await lookup.group(request, request.params.id, AccessLevel.OWNER);
      const updated = await groups.update(group, request.body);
      return mapGroup(updated, base, await parentNames(updated));
    },
  );

  app.delete(
    '/groups/:id',
    {
      schema: { summary: 'Schedules a group and everything in it for deletion', tags, params: S.RefParams, response: { 202: E.Accepted } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const { group } = await lookup.group(request, request.params.id, AccessLevel.OWNER);
      checkUnmodifiedSince(request, group.updated_at);
      await groups.scheduleRemoval(group);
      return reply.code(202).send({ message: '202 Accepted' });
    },
  );

  app.get(
    '/groups/:id/subgroups',
    {
      schema: {
        summary: 'Lists the subgroups of a group the caller can see',
        tags,
        params: S.RefParams,
        querystring: S.ListSubgroupsQuery,
        response: { 200: E.GroupList },
      },
      config: { policy: { auth: 'optional' } },
    },
    async (request, reply) => {
      const { group } = await lookup.group(request, request.params.id);
      const page = pageOf(request.query);
      const filter = { ...groupFilter(request.query, request.actor, platform.clock.now()), parentId: group.id };
      const { rows, total } = await groups.list(filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return Promise.all(rows.map(async (g) => mapGroup(g, base, await parentNames(g))));
    },
  );

  app.get(
    '/groups/:id/projects',
    {
      schema: {
        summary: 'Lists the projects of a group the caller can see',
        tags,
        params: S.RefParams,
        querystring: S.ListProjectsQuery,
        response: { 200: E.ProjectList },
      },
      config: { policy: { auth: 'optional' } },
    },
    async (request, reply) => {
      const { group } = await lookup.group(request, request.params.id);
      const page = pageOf(request.query);
      const filter = { ...projectFilter(request.query, request.actor, platform.clock.now()), namespaceIds: [group.id] };
      const { rows, total } = await projects.list(request.actor, filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      const presented = rows.map((p) => mapProject(p, base, { namespace: group, admin: request.actor?.user.isAdmin ?? false }));
      return request.query.simple ? presented.map(simpleProject) : presented;
    },
  );
}
