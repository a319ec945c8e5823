import type { FastifyRequest } from 'fastify';
import { requireActor } from '../../infra/auth/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import type { UsersService } from '../identity/index.js';
import type { ProjectLookup } from '../projects/index.js';
import { mapGlobalSetting, mapSetting } from './notifications.presenter.js';
import * as S from './notifications.schemas.js';
import type { NotificationsService, SettingInput } from './notifications.service.js';

export interface NotificationsRouteDeps {
  service: NotificationsService;
  users: UsersService;
  lookup: ProjectLookup;
}

/** Parameters may come in the query string, a form or JSON body (gitbeaker sends JSON). */
function input(request: FastifyRequest): SettingInput {
  const query = (request.query ?? {}) as SettingInput;
  const body = request.body && typeof request.body === 'object' ? (request.body as SettingInput) : {};
  return { ...query, ...body };
}

/** SPEC "Notification settings"; every route needs a signed-in user (reference §1.1). */
export function notificationsRoutes(app: ApiApp, deps: NotificationsRouteDeps): void {
  const { service, users, lookup } = deps;
  const policy = { auth: 'required' } as const;
  const tags = ['notifications'];

  app.get(
    '/notification_settings',
    {
      schema: { summary: "Shows the caller's global notification setting", tags, response: { 200: S.GlobalSetting } },
      config: { policy },
    },
    async (request) => {
      return mapGlobalSetting(await service.getGlobal(await users.get(requireActor(request).user.id)));
    },
  );

  app.put(
    '/notification_settings',
    {
      schema: {
        summary: "Changes the caller's global notification setting",
        tags,
        querystring: S.SettingBody,
        response: { 200: S.GlobalSetting },
      },
      config: { policy },
    },
    async (request) => {
      return mapGlobalSetting(await service.updateGlobal(await users.get(requireActor(request).user.id), input(request)));
    },
  );

  // A group's and a project's setting are the same two routes; only the lookup and the source kind differ.
  const sources = [
    {
      path: '/groups/:id/notification_settings',
      noun: 'group',
      kind: 'namespace',
      find: async (request: FastifyRequest, ref: string) => (await lookup.group(request, ref)).group.id,
    },
    {
      path: '/projects/:id/notification_settings',
      noun: 'project',
      kind: 'project',
      find: async (request: FastifyRequest, ref: string) => (await lookup.project(request, ref)).project.id,
    },
  ] as const;

  for (const source of sources) {
    app.get(
      source.path,
      {
        schema: {
          summary: `Shows the caller's notification setting for a ${source.noun}`,
          tags,
          params: S.SourceParams,
          response: { 200: S.Setting },
        },
        config: { policy },
      },
      async (request) => {
        const userId = requireActor(request).user.id;
        const sourceId = await source.find(request, request.params.id);
        return mapSetting(await service.getSource(userId, source.kind, sourceId));
      },
    );

    app.put(
      source.path,
      {
        schema: {
          summary: `Changes the caller's notification setting for a ${source.noun}`,
          tags,
          params: S.SourceParams,
          querystring: S.SettingBody,
          response: { 200: S.Setting },
        },
        config: { policy },
      },
      async (request) => {
        const userId = requireActor(request).user.id;
        const sourceId = await source.find(request, request.params.id);
        return mapSetting(await service.updateSource(userId, source.kind, sourceId, input(request)));
      },
    );
  }
}
