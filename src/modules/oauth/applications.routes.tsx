import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import { NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { NoContent } from '../../infra/http/openapi-schemas.js';
import { sendPage } from '../../web/layout.js';
import type { PageAuth } from '../identity/index.js';
import type { ApplicationsService, ApplicationWithSecret } from './applications.service.js';
import { mapApplication, mapApplicationWithSecret } from './oauth.presenter.js';
import { ApplicationsPage, OAuthErrorPage } from './oauth.pages.js';
import * as S from './oauth.schemas.js';
import { registrableScopes } from './scopes.js';

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
      const created = await applications.create({ name, redirectUri: redirect_uri, scopes, confidential: confidential ?? true }, admin);
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
      await applications.remove(request.params.id, null);
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
      const renewed = await applications.renewSecret(request.params.id, null);
      return reply.code(201).send(mapApplicationWithSecret(renewed.application, renewed.secret));
    },
  );
}

const NONE = { policy: { auth: 'none' } } as const;
const PAGE = '/user_settings/applications';

const bodyOf = (request: FastifyRequest): Record<string, unknown> =>
  (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const list = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];

/** `/user_settings/applications`: each signed-in user manages their own applications. */
export function applicationsPageRoutes(app: FastifyInstance, applications: ApplicationsService, pageAuth: PageAuth): void {
  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    actor: Actor,
    extra: Partial<Parameters<typeof ApplicationsPage>[0]> = {},
    status = 200,
  ) => {
    const csrf = pageAuth.pageCsrf(request, reply);
    const own = await applications.list(actor.user.id);
    const scopes = registrableScopes(actor.user.isAdmin);
    return sendPage(
      reply,
      <ApplicationsPage username={actor.user.username} csrf={csrf} applications={own} scopes={scopes} {...extra} />,
      status,
    );
  };
  /** The signed-in actor for a form POST with a valid CSRF token; otherwise the answer was sent. */
  const formActor = async (request: FastifyRequest, reply: FastifyReply): Promise<Actor | null> => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return null;
    if (pageAuth.verifyPageCsrf(request)) return actor;
    await render(request, reply, actor, { notice: 'The form has expired. Try again.' }, 403);
    return null;
  };
  const reveal = (request: FastifyRequest, reply: FastifyReply, actor: Actor, revealed: ApplicationWithSecret) =>
    render(request, reply, actor, { revealed: { application: revealed.application, secret: revealed.secret } });
  const notFound = (reply: FastifyReply) =>
    sendPage(reply, <OAuthErrorPage title="Not found" error="not_found" description="That application does not exist." />, 404);

  app.get(PAGE, { config: NONE }, async (request, reply) => {
    const actor = await pageAuth.requireSignedIn(request, reply);
    if (!actor) return reply;
    return render(request, reply, actor);
  });

  app.post(PAGE, { config: NONE, bodyLimit: 64 * 1024 }, async (request, reply) => {
    const actor = await formActor(request, reply);
    if (!actor) return reply;
    const body = bodyOf(request);
    const form = {
      name: str(body.name),
      redirectUri: str(body.redirect_uri),
      confidential: body.confidential !== undefined,
      scopes: list(body.scopes),
    };
    try {
      const created = await applications.create(
        { name: form.name, redirectUri: form.redirectUri, scopes: form.scopes, confidential: form.confidential },
        { ownerId: actor.user.id, isAdmin: actor.user.isAdmin },
      );
      return await reveal(request, reply, actor, created);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return render(request, reply, actor, { errors: error.messages as Record<string, string[]>, form }, 422);
    }
  });

  app.post(`${PAGE}/:id/renew`, { config: NONE, schema: { params: S.ApplicationIdParams } }, async (request, reply) => {
    const actor = await formActor(request, reply);
    if (!actor) return reply;
    try {
      return await reveal(request, reply, actor, await applications.renewSecret((request.params as { id: number }).id, actor.user.id));
    } catch (error) {
      if (error instanceof NotFoundError) return notFound(reply);
      throw error;
    }
  });

  app.post(`${PAGE}/:id/delete`, { config: NONE, schema: { params: S.ApplicationIdParams } }, async (request, reply) => {
    const actor = await formActor(request, reply);
    if (!actor) return reply;
    try {
      await applications.remove((request.params as { id: number }).id, actor.user.id);
    } catch (error) {
      if (error instanceof NotFoundError) return notFound(reply);
      throw error;
    }
    return reply.redirect(PAGE, 303);
  });
}
