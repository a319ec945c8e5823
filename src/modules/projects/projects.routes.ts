import { checkUnmodifiedSince, pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { type Actor, requireActor } from '../../infra/auth/index.js';
import { AccessLevel } from './access.policy.js';
import { projectFilter, simpleProject } from './project-filters.rules.js';
import { mapProject } from './projects.presenter.js';
import type { ProjectRow } from './projects.repository.js';
import * as E from './entities.schemas.js';
import * as S from './projects.schemas.js';
import type { ProjectsRouteDeps } from './projects.deps.js';

export function projectsRoutes(app: ApiApp, deps: ProjectsRouteDeps): void {
  const { platform, lookup, projects, users, issues } = deps;
  const base = platform.config.externalUrl;
  const tags = ['projects'];

  const present = async (project: ProjectRow, actor: Actor | null, level?: number) => {
    const namespace = await projects.namespaceOf(project);
    const owner = namespace?.kind === 'user' && namespace.owner_id !== null ? await users.findById(namespace.owner_id) : undefined;
    const openIssues = (
      await issues.list(project, { state: 'opened', orderBy: 'created_at', sort: 'desc', includeConfidential: true, viewerId: null }, 1, 0)
    ).total;
    return mapProject(project, base, {
      namespace,
      owner,
      openIssues,
      admin: actor?.user.isAdmin ?? false,
      ...(level !== undefined && actor
        ? { permissions: { project_access: level > 0 ? { access_level: level } : null, group_access: null } }
        : {}),
    });
  };

  app.post(
    '/projects',
    {
      schema: { summary: 'Creates a project', tags, body: S.CreateProjectBody, response: { 201: E.Project } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const project = await projects.create(requireActor(request), request.body);
      return reply.code(201).send(await present(project, request.actor, AccessLevel.OWNER));
    },
  );

  app.get(
    '/projects',
    {
      schema: {
        summary: 'Lists the projects the caller can see',
        tags,
        querystring: S.ListProjectsQuery,
        response: { 200: E.ProjectList },
      },
      config: { policy: { auth: 'optional' } },
    },
    async (request, reply) => {
      const q = request.query;
      const page = pageOf(q);
      const filter = projectFilter(q, request.actor, platform.clock.now());
      const { rows, total } = await projects.list(request.actor, filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      const presented = await Promise.all(rows.map((p) => present(p, request.actor)));
      return q.simple ? presented.map(simpleProject) : presented;
    },
  );

  app.get(
    '/projects/:id',
    {
      schema: { summary: 'Shows a project, by id or full path', tags, params: S.RefParams, response: { 200: E.Project } },
      config: { policy: { auth: 'optional', jobToken: true } },
    },
    async (request) => {
      const { project, level } = await lookup.project(request, request.params.id);
      return present(project, request.actor, level);
    },
  );

  app.put(
    '/projects/:id',
    {
      schema: { summary: 'Changes a project', tags, params: S.RefParams, body: S.UpdateProjectBody, response: { 200: E.Project } },
      config: { policy: { auth: 'required' } },
    },
    async (request) => {
      const changesPath = request.body.path !== undefined || request.body.visibility !== undefined;
      const { project, level } = await lookup.project(request, request.params.id, changesPath ? AccessLevel.OWNER : AccessLevel.MAINTAINER);
      return present(await projects.update(project, request.body, request.actor), request.actor, level);
    },
  );

  app.delete(
    '/projects/:id',
    {
      schema: { summary: 'Schedules a project for deletion', tags, params: S.RefParams, response: { 202: E.Accepted } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.OWNER);
      checkUnmodifiedSince(request, project.updated_at);
      await projects.scheduleRemoval(project);
      return reply.code(202).send({ message: '202 Accepted' });
    },
  );
}
