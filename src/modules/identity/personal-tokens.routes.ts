import { type Actor, requireActor } from '../../infra/auth/index.js';
import { NotFoundError, UnauthorizedError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { NoContent } from '../../infra/http/openapi-schemas.js';
import { mapToken } from './identity.presenter.js';
import type { IdentityRouteDeps } from './identity.routes.js';
import * as S from './identity.schemas.js';
import { emptyBodyAsObject } from './resource-tokens.routes.js';
import type { TokenRow } from './tokens.repository.js';

/**
 * Personal access tokens (the caller's own, and any user's for administrators) and impersonation
 * tokens; project and group tokens are in resource-tokens.routes.ts.
 */
export function personalTokenRoutes(app: ApiApp, { platform, users, tokens }: IdentityRouteDeps): void {
  const base = platform.config.externalUrl;
  const now = () => platform.clock.now();
  const ownTokenOr404 = (id: number | 'self', actor: Actor): Promise<TokenRow> => tokens.getManageable(actor, id);
  const impersonationTokenOr404 = async (params: { user_id: number; token_id: number }): Promise<TokenRow> => {
    const row = await tokens.findById(params.token_id);
    if (!row || row.user_id !== params.user_id || row.kind !== 'impersonation') throw new NotFoundError('Impersonation Token');
    return row;
  };
  /**
   * POST /users/:user_id/{personal_access,impersonation}_tokens: an administrator mints a token
   * of `kind` for a user, who must exist (404 otherwise). Only the personal one has an operationId.
   */
  const createForUserRoute = (path: string, kind: 'personal' | 'impersonation', summary: string, operationId?: string) =>
    app.post(
      path,
      {
        schema: {
          summary,
          ...(operationId === undefined ? {} : { operationId }),
          tags: ['tokens'],
          params: S.UserTokenParams,
          body: S.CreateTokenBody,
          response: { 201: S.AccessTokenWithSecret },
        },
        config: { policy: { auth: 'required', admin: true }, secret: true },
      },
      async (request, reply) => {
        const user = await users.get(request.params.user_id);
        const actor = requireActor(request);
        const created = await tokens.create(user.id, kind, request.body, {
          createdById: actor.user.id,
          audit: { by: actor, entity: { type: 'User', id: user.id, path: user.username } },
        });
        return reply.code(201).send(mapToken(created.row, now(), created.token));
      },
    );

  app.post(
    '/user/personal_access_tokens',
    {
      schema: {
        summary: 'Creates a personal access token for the authenticated user',
        operationId: 'createCurrentUserPersonalAccessToken',
        tags: ['tokens'],
        body: S.CreateTokenBody,
        response: { 201: S.AccessTokenWithSecret },
      },
      config: { policy: { auth: 'required' }, secret: true },
    },
    async (request, reply) => {
      const created = await tokens.createOwn(requireActor(request), request.body);
      return reply.code(201).send(mapToken(created.row, now(), created.token));
    },
  );

  createForUserRoute(
    '/users/:user_id/personal_access_tokens',
    'personal',
    'Creates a personal access token for a user',
    'createUserPersonalAccessToken',
  );

  app.get(
    '/personal_access_tokens',
    {
      schema: {
        summary: 'Lists personal access tokens',
        tags: ['tokens'],
        querystring: S.ListTokensQuery,
        response: { 200: S.AccessTokenList },
      },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const userId = actor.user.isAdmin ? (request.query.user_id ?? null) : actor.user.id;
      const page = pageOf(request.query);
      const { rows, total } = await tokens.list({ userId, kinds: ['personal'], state: request.query.state }, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((row) => mapToken(row, now()));
    },
  );

  app.get(
    '/personal_access_tokens/:id',
    {
      schema: { summary: 'Shows a personal access token', tags: ['tokens'], params: S.TokenIdParams, response: { 200: S.AccessToken } },
      config: { policy: { auth: 'required' } },
    },
    async (request) => {
      return mapToken(await ownTokenOr404(request.params.id, requireActor(request)), now());
    },
  );

  app.delete(
    '/personal_access_tokens/:id',
    {
      schema: { summary: 'Revokes a personal access token', tags: ['tokens'], params: S.TokenIdParams, response: { 204: NoContent } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const actor = requireActor(request);
      const row = await ownTokenOr404(request.params.id, actor);
      await tokens.revoke(row, { by: actor });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/personal_access_tokens/:id/rotate',
    {
      schema: {
        summary: 'Rotates a personal access token',
        tags: ['tokens'],
        params: S.TokenIdParams,
        body: S.RotateTokenBody,
        response: { 200: S.AccessTokenWithSecret },
      },
      config: { policy: { auth: 'required' }, secret: true },
      preValidation: emptyBodyAsObject,
    },
    async (request) => {
      const actor = requireActor(request);
      const row = await ownTokenOr404(request.params.id, actor);
      if (row.revoked === 1) throw new UnauthorizedError();
      const created = await tokens.rotate(row, request.body?.expires_at, { by: actor });
      return mapToken(created.row, now(), created.token);
    },
  );

  createForUserRoute('/users/:user_id/impersonation_tokens', 'impersonation', 'Creates an impersonation token for a user');

  app.get(
    '/users/:user_id/impersonation_tokens',
    {
      schema: {
        summary: "Lists a user's impersonation tokens",
        tags: ['tokens'],
        params: S.UserTokenParams,
        querystring: S.ImpersonationListQuery,
        response: { 200: S.AccessTokenList },
      },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request, reply) => {
      await users.get(request.params.user_id);
      const page = pageOf(request.query);
      const state = request.query.state === 'all' ? undefined : request.query.state;
      const filter = { userId: request.params.user_id, kinds: ['impersonation'] as const, state };
      const { rows, total } = await tokens.list(filter, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((row) => mapToken(row, now()));
    },
  );

  app.get(
    '/users/:user_id/impersonation_tokens/:token_id',
    {
      schema: {
        summary: 'Shows an impersonation token',
        tags: ['tokens'],
        params: S.ImpersonationParams,
        response: { 200: S.AccessToken },
      },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request) => {
      return mapToken(await impersonationTokenOr404(request.params), now());
    },
  );

  app.delete(
    '/users/:user_id/impersonation_tokens/:token_id',
    {
      schema: {
        summary: 'Revokes an impersonation token',
        tags: ['tokens'],
        params: S.ImpersonationParams,
        response: { 204: NoContent },
      },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request, reply) => {
      const row = await impersonationTokenOr404(request.params);
      await tokens.revoke(row, { by: requireActor(request) });
      return reply.code(204).send(null);
    },
  );
}
