import { Type, type TObject } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import type { ProjectLookup, SnippetsService } from '../projects/index.js';
import type { MoveContainerKind } from './git.repository.js';
import type { MovePresenter } from './moves.presenter.js';
import * as S from './moves.schemas.js';
import type { MovesService } from './moves.service.js';

export interface MovesRouteDeps {
  platform: Platform;
  moves: MovesService;
  presenter: MovePresenter;
  lookup: ProjectLookup;
  snippets: SnippetsService;
}

const FAMILIES: { kind: MoveContainerKind; collection: string; containers: string; entity: TObject }[] = [
  { kind: 'project', collection: 'project_repository_storage_moves', containers: 'projects', entity: S.ProjectMove },
  { kind: 'snippet', collection: 'snippet_repository_storage_moves', containers: 'snippets', entity: S.SnippetMove },
  { kind: 'group', collection: 'group_repository_storage_moves', containers: 'groups', entity: S.GroupMove },
];
const tags = ['repository_storage_moves'];

/**
 * Repository storage moves (SPEC "Repository storage moves", reference §3.1), administrators
 * only. They exist only on self-managed installations, group moves only on Premium and
 * Ultimate: elsewhere the routes are not registered at all, so every caller gets 404.
 */
export function movesRoutes(app: ApiApp, deps: MovesRouteDeps): void {
  const { platform, moves, presenter } = deps;
  const base = platform.config.externalUrl;
  const policy = { auth: 'required' as const, admin: true };

  const containerId = async (kind: MoveContainerKind, request: FastifyRequest, ref: string): Promise<number> => {
    if (kind === 'project') return (await deps.lookup.project(request, ref)).project.id;
    if (kind === 'group') return (await deps.lookup.group(request, ref)).group.id;
    // A snippet id is an integer, as on every snippet route: anything else is a bad parameter
    // (SPEC "Errors" rule 3), not a snippet that is missing. The path is typed as a string for
    // the project and group families it shares with.
    if (!/^\d+$/.test(ref)) throw ValidationError.field('id', 'is invalid');
    // Any snippet, whatever its visibility (reference §3.1): administrators see all.
    const snippet = /^\d{1,15}$/.test(ref) ? await deps.snippets.findById(Number(ref)) : undefined;
    if (!snippet) throw new NotFoundError('Snippet');
    return snippet.id;
  };

  for (const { kind, collection, containers, entity } of FAMILIES) {
    try {
      moves.ensureAvailable(kind);
    } catch {
      continue;
    }

    // Declared names: the derived ones would spell out both path parameters.
    const Kind = `${kind.charAt(0).toUpperCase()}${kind.slice(1)}`;
    const list = { 200: Type.Array(entity) };
    const one = { 200: entity };
    const listAll = {
      summary: `Lists every ${kind} repository storage move`,
      operationId: `list${Kind}RepositoryStorageMoves`,
      tags,
      querystring: S.MoveListQuery,
      response: list,
    };
    app.get(`/${collection}`, { schema: listAll, config: { policy } }, async (request, reply) => {
      const page = pageOf(request.query);
      const { rows, total } = await moves.list(kind, null, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return presenter.presentAll(rows);
    });

    const show = {
      summary: `Shows a ${kind} repository storage move`,
      operationId: `get${Kind}RepositoryStorageMove`,
      tags,
      params: S.MoveParams,
      response: one,
    };
    app.get(`/${collection}/:repository_storage_move_id`, { schema: show, config: { policy } }, async (request) =>
      presenter.present(await moves.get(kind, request.params.repository_storage_move_id)),
    );

    const bulk = {
      summary: `Schedules moves of every ${kind} repository on a storage`,
      operationId: `scheduleAll${Kind}RepositoryStorageMoves`,
      tags,
      body: S.BulkMoveBody,
      response: { 202: S.MovesScheduled },
    };
    app.post(`/${collection}`, { schema: bulk, config: { policy } }, async (request, reply) => {
      await moves.scheduleBulk(kind, request.body.source_storage_name, request.body.destination_storage_name);
      return reply.code(202).send({ message: '202 Accepted' });
    });

    app.get(
      `/${containers}/:id/repository_storage_moves`,
      {
        schema: {
          summary: `Lists a ${kind}'s repository storage moves`,
          operationId: `listRepositoryStorageMovesOf${Kind}`,
          tags,
          params: S.ContainerParams,
          querystring: S.MoveListQuery,
          response: list,
        },
        config: { policy },
      },
      async (request, reply) => {
        const id = await containerId(kind, request, request.params.id);
        const page = pageOf(request.query);
        const { rows, total } = await moves.list(kind, id, page.limit, page.offset);
        setPaginationHeaders(request, reply, page, total, base);
        return presenter.presentAll(rows);
      },
    );

    app.get(
      `/${containers}/:id/repository_storage_moves/:repository_storage_move_id`,
      {
        schema: {
          summary: `Shows a repository storage move of a ${kind}`,
          operationId: `getRepositoryStorageMoveOf${Kind}`,
          tags,
          params: S.ContainerMoveParams,
          response: one,
        },
        config: { policy },
      },
      async (request) => {
        const id = await containerId(kind, request, request.params.id);
        return presenter.present(await moves.get(kind, request.params.repository_storage_move_id, id));
      },
    );

    app.post(
      `/${containers}/:id/repository_storage_moves`,
      {
        schema: {
          summary: `Schedules a move of a ${kind}'s repository`,
          operationId: `schedule${Kind}RepositoryStorageMove`,
          tags,
          params: S.ContainerParams,
          body: S.SingleMoveBody,
          response: { 201: entity },
        },
        config: { policy },
      },
      async (request, reply) => {
        const id = await containerId(kind, request, request.params.id);
        const move = await moves.schedule(kind, id, request.body.destination_storage_name, request.actor);
        return reply.code(201).send(await presenter.present(move));
      },
    );
  }
}
