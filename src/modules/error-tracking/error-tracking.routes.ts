import { MissingAttributeError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { AccessLevel } from '../projects/index.js';
import { mapClientKey, mapSettings } from './errors.presenter.js';
import * as S from './error-tracking.schemas.js';
import type { ErrorTrackingDeps } from './error-tracking.deps.js';

type Fields = { active?: boolean | undefined; integrated?: boolean | undefined; email_notifications?: boolean | undefined };

/** Body values win over the query string; gitbeaker sends only the query string. */
function merged(query: Fields, body: Fields | undefined): Fields {
  return {
    active: body?.active ?? query.active,
    integrated: body?.integrated ?? query.integrated,
    email_notifications: body?.email_notifications ?? query.email_notifications,
  };
}

/** A bodiless PATCH (gitbeaker puts the fields in the query) validates as an empty body. */
const emptyBody = async (request: { body: unknown }): Promise<void> => {
  request.body ??= {};
};

/** SPEC "Error tracking management": Maintainer or Owner; token scope `api` for writes. */
export function settingsRoutes(app: ApiApp, deps: ErrorTrackingDeps): void {
  const { lookup, settings, platform } = deps;
  const base = platform.config.externalUrl;
  const policy = { auth: 'required' } as const;
  const tags = ['error_tracking'];

  app.get(
    '/projects/:id/error_tracking/settings',
    {
      schema: { summary: "Shows the project's error tracking settings", tags, params: S.RefParams, response: { 200: S.Settings } },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return mapSettings(await settings.get(project.id));
    },
  );

  app.put(
    '/projects/:id/error_tracking/settings',
    {
      schema: {
        summary: "Sets the project's error tracking settings",
        tags,
        params: S.RefParams,
        querystring: S.SettingsFields,
        body: S.SettingsFields,
        response: { 200: S.Settings },
      },
      preValidation: emptyBody,
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const { active, integrated, email_notifications } = merged(request.query, request.body);
      const missing = [...(active === undefined ? ['active'] : []), ...(integrated === undefined ? ['integrated'] : [])];
      if (active === undefined || integrated === undefined) throw new MissingAttributeError(missing);
      return mapSettings(await settings.put(project.id, { active, integrated, email_notifications }, { by: request.actor, project }));
    },
  );

  app.patch(
    '/projects/:id/error_tracking/settings',
    {
      schema: {
        summary: "Enables or disables the project's error tracking",
        tags,
        params: S.RefParams,
        querystring: S.SettingsFields,
        body: S.SettingsFields,
        response: { 200: S.Settings },
      },
      preValidation: emptyBody,
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const { active, integrated, email_notifications } = merged(request.query, request.body);
      if (active === undefined) throw new MissingAttributeError(['active']);
      return mapSettings(await settings.patch(project.id, { active, integrated, email_notifications }, { by: request.actor, project }));
    },
  );

  app.get(
    '/projects/:id/error_tracking/client_keys',
    {
      schema: {
        summary: "Lists the project's error tracking client keys",
        tags,
        params: S.RefParams,
        querystring: S.PaginationOnly,
        response: { 200: S.ClientKeyList },
      },
      config: { policy, secret: true },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const page = pageOf(request.query);
      const { rows, total } = await settings.listKeys(project.id, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((row) => mapClientKey(row, base));
    },
  );

  app.post(
    '/projects/:id/error_tracking/client_keys',
    {
      schema: { summary: 'Creates an error tracking client key', tags, params: S.RefParams, response: { 201: S.ClientKey } },
      config: { policy, secret: true },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return reply.code(201).send(mapClientKey(await settings.createKey(project.id, { by: request.actor, project }), base));
    },
  );

  // The established product answers with the deleted key (reference B2).
  app.delete(
    '/projects/:id/error_tracking/client_keys/:key_id',
    {
      schema: { summary: 'Deletes an error tracking client key and answers it', tags, params: S.KeyParams, response: { 200: S.ClientKey } },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return mapClientKey(await settings.deleteKey(project.id, request.params.key_id, { by: request.actor, project }), base);
    },
  );
}
