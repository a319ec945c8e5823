import { Type } from '@sinclair/typebox';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { NoContent } from '../../infra/http/openapi-schemas.js';
import type { ApplicationsService } from './applications.service.js';
import { mapApplication, mapApplicationWithSecret } from './oauth.presenter.js';
import * as S from './oauth.schemas.js';

const ADMIN = { policy: { auth: 'required', admin: true } } as const;
/** Creation and renewal answer the client secret. */
const ADMIN_SECRET = { ...ADMIN, secret: true } as const;

/** The admin API of DESIGN.md §4 (reference §2.10); instance-wide applications have no owner. */
export function applicationsApiRoutes(app: ApiApp, applications: ApplicationsService, externalUrl: string): void {
  const admin = { ownerId: null, isAdmin: true };

  // Paginated as DESIGN.md §5 asks of every list, though the reference answers a bare array:
  // with the default of 20 a small instance still gets the whole list (docs/decisions.md).
  app.get(
    '/applications',
    {
      schema: {
        summary: 'Lists the instance-wide OAuth applications',
        tags: ['applications'],
        querystring: S.ListApplicationsQuery,
        response: { 200: Type.Array(S.ApplicationEntity) },
      },
      config: ADMIN,
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const { rows, total } = await applications.page(page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, externalUrl);
      return rows.map(mapApplication);
    },
  );

  app.post(
    '/applications',
    {
      schema: {
        summary: 'Creates an instance-wide OAuth application',
        tags: ['applications'],
        body: S.CreateApplicationBody,
        response: { 201: S.ApplicationWithSecretEntity },
      },
      config: ADMIN_SECRET,
    },
    async (request, reply) => {
      const { name, redirect_uri, scopes, confidential } = request.body;
      const created = await applications.create(
        { name, redirectUri: redirect_uri, scopes, confidential: confidential ?? true },
        { ...admin, by: request.actor },
      );
      return reply.code(201).send(mapApplicationWithSecret(created.application, created.secret));
    },
  );

  app.delete(
    '/applications/:id',
    {
      schema: {
        summary: 'Deletes an OAuth application',
        tags: ['applications'],
        params: S.ApplicationIdParams,
        response: { 204: NoContent },
      },
      config: ADMIN,
    },
    async (request, reply) => {
      await applications.remove(request.params.id, null, request.actor);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/applications/:id/renew-secret',
    {
      schema: {
        summary: "Renews an OAuth application's secret",
        operationId: 'renewApplicationSecret',
        tags: ['applications'],
        params: S.ApplicationIdParams,
        response: { 201: S.ApplicationWithSecretEntity },
      },
      config: ADMIN_SECRET,
    },
    async (request, reply) => {
      const renewed = await applications.renewSecret(request.params.id, null, request.actor);
      return reply.code(201).send(mapApplicationWithSecret(renewed.application, renewed.secret));
    },
  );
}
