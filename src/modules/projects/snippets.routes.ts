import { Type } from '@sinclair/typebox';
import { NotFoundError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { type Actor, requireActor } from '../../infra/auth/index.js';
import { spamContextOf } from '../spam/index.js';
import { AccessLevel } from './access.policy.js';
import { mapSnippet } from './projects.presenter.js';
import * as S from './projects.schemas.js';
import * as N from './snippets.schemas.js';
import type { ProjectsRouteDeps } from './projects.deps.js';

export function snippetsRoutes(app: ApiApp, deps: ProjectsRouteDeps): void {
  const { platform, lookup, snippets, users, projects, access } = deps;
  const base = platform.config.externalUrl;
  const tags = ['snippets'];
  const projectLevel = (actor: Actor | null) => async (projectId: number) => {
    const project = await projects.findById(projectId);
    if (!project) return { level: 0, visible: false };
    const level = await access.projectLevel(actor, project);
    return { level, visible: access.canSee(actor, project.visibility, level) };
  };

  app.post(
    '/snippets',
    {
      schema: { summary: 'Creates a personal snippet', tags, body: S.CreateSnippetBody, response: { 201: N.Snippet } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const snippet = await snippets.create(actor, null, request.body, spamContextOf(request, actor.user.id));
      return reply.code(201).send(mapSnippet(snippet, base, await users.mapByIds([snippet.author_id]), null));
    },
  );

  app.get(
    '/snippets',
    {
      schema: { summary: "Lists the caller's snippets", tags, querystring: S.PageQuery, response: { 200: N.SnippetList } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const actor = requireActor(request);
      // The caller's snippets, less those of projects it can no longer see (a removed author's).
      const { rows, total } = await snippets.list({ authorId: actor.user.id, scope: access.listScope(actor) }, page.limit, page.offset);
      const byId = await users.mapByIds(rows.map((s) => s.author_id));
      setPaginationHeaders(request, reply, page, total, base);
      return Promise.all(
        rows.map(async (s) => mapSnippet(s, base, byId, s.project_id ? ((await projects.findById(s.project_id)) ?? null) : null)),
      );
    },
  );

  app.get(
    '/snippets/:id',
    {
      schema: { summary: 'Shows a snippet', tags, params: S.SnippetParams, response: { 200: N.Snippet } },
      config: { policy: { auth: 'optional' } },
    },
    async (request) => {
      const snippet = await snippets.getVisible(request.actor, request.params.id, projectLevel(request.actor));
      const project = snippet.project_id ? ((await projects.findById(snippet.project_id)) ?? null) : null;
      return mapSnippet(snippet, base, await users.mapByIds([snippet.author_id]), project);
    },
  );

  app.delete(
    '/snippets/:id',
    {
      schema: { summary: 'Deletes a snippet', tags, params: S.SnippetParams, response: { 204: Type.Null() } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const snippet = await snippets.getVisible(actor, request.params.id, projectLevel(actor));
      const level = snippet.project_id ? (await projectLevel(actor)(snippet.project_id)).level : 0;
      await snippets.remove(actor, snippet, level);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/projects/:id/snippets',
    {
      schema: {
        summary: 'Creates a snippet in a project',
        tags,
        params: S.RefParams,
        body: S.CreateSnippetBody,
        response: { 201: N.Snippet },
      },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.REPORTER);
      const actor = requireActor(request);
      const snippet = await snippets.create(actor, project, request.body, spamContextOf(request, actor.user.id));
      return reply.code(201).send(mapSnippet(snippet, base, await users.mapByIds([snippet.author_id]), project));
    },
  );

  app.get(
    '/projects/:id/snippets',
    {
      schema: {
        summary: 'Lists the snippets of a project the caller may see',
        tags,
        params: S.RefParams,
        querystring: S.PageQuery,
        response: { 200: N.SnippetList },
      },
      config: { policy: { auth: 'optional' } },
    },
    async (request, reply) => {
      const { project, level } = await lookup.project(request, request.params.id);
      const page = pageOf(request.query);
      const visibilities = level >= AccessLevel.GUEST ? undefined : request.actor ? ['public', 'internal'] : ['public'];
      const { rows, total } = await snippets.list(
        { projectId: project.id, ...(visibilities ? { visibilities } : {}) },
        page.limit,
        page.offset,
      );
      const byId = await users.mapByIds(rows.map((s) => s.author_id));
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((s) => mapSnippet(s, base, byId, project));
    },
  );

  app.get(
    '/projects/:id/snippets/:snippet_id',
    {
      schema: { summary: 'Shows a snippet of a project', tags, params: S.ProjectSnippetParams, response: { 200: N.Snippet } },
      config: { policy: { auth: 'optional' } },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id);
      const snippet = await snippets.getVisible(request.actor, request.params.snippet_id, projectLevel(request.actor));
      if (snippet.project_id !== project.id) throw new NotFoundError('Snippet');
      return mapSnippet(snippet, base, await users.mapByIds([snippet.author_id]), project);
    },
  );
}
