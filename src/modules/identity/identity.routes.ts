import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, weakEtag, type ApiApp } from '../../infra/http/index.js';
import { NoContent } from '../../infra/http/openapi-schemas.js';
import type { Platform } from '../../infra/platform.js';
import { mapToken, mapUser, mapUserBasic, mapUserPublic, mapUserWithAdmin } from './identity.presenter.js';
import * as S from './identity.schemas.js';
import { emptyBodyAsObject } from './resource-tokens.routes.js';
import type { TokenRow } from './tokens.repository.js';
import type { TokensService } from './tokens.service.js';
import type { UserRow } from './users.repository.js';
import type { UsersService } from './users.service.js';

export interface IdentityRouteDeps {
  platform: Platform;
  users: UsersService;
  tokens: TokensService;
}

function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthorizedError();
  return request.actor;
}

/** Users and their tokens (DESIGN.md §4). Policy sits beside each route. */
export function identityRoutes(app: ApiApp, { platform, users, tokens }: IdentityRouteDeps): void {
  const base = platform.config.externalUrl;
  const now = () => platform.clock.now();
  const present = (user: UserRow, viewer: Actor | null) => {
    if (viewer?.user.isAdmin) return mapUserWithAdmin(user, base);
    if (viewer?.user.id === user.id) return mapUserPublic(user, base);
    return mapUser(user, base, viewer?.user ?? null);
  };
  const ownTokenOr404 = (id: number | 'self', actor: Actor): Promise<TokenRow> => tokens.getManageable(actor, id);

  // The caller's own row lives a few seconds in users.getOwn; its JSON and ETag are built
  // once per row and view, so a client polling /user gets the same bytes without redoing them.
  const ownBodies = new WeakMap<UserRow, { admin: boolean; json: string; etag: string }>();
  app.get(
    '/user',
    {
      schema: { summary: 'Shows the authenticated user', operationId: 'getCurrentUser', tags: ['users'], response: { 200: S.CurrentUser } },
      config: { policy: { auth: 'required', scopes: ['read_user'] } },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      const user = await users.getOwn(actor.user.id);
      const admin = actor.user.isAdmin;
      let body = ownBodies.get(user);
      if (!body || body.admin !== admin) {
        // The route's response schema serialises it (fast-json-stringify), as it would any answer.
        const json = reply.serialize(admin ? mapUserWithAdmin(user, base) : mapUserPublic(user, base)) as string;
        body = { admin, json, etag: weakEtag(json) };
        ownBodies.set(user, body);
      }
      // Serialised above with this route's schema; Fastify sends a JSON string as it is.
      const json = body.json as unknown as Static<typeof S.CurrentUser>;
      return reply.type('application/json; charset=utf-8').header('etag', body.etag).send(json);
    },
  );

  app.get(
    '/users',
    {
      schema: { summary: 'Lists users', tags: ['users'], querystring: S.ListUsersQuery, response: { 200: S.UserList } },
      config: { policy: { auth: 'optional', scopes: ['read_user'] } },
    },
    async (request, reply) => {
      const { username, search, active, blocked, humans } = request.query;
      if (!request.actor && !username) throw new ForbiddenError('Not authorized to access /api/v4/users');
      const page = pageOf(request.query);
      const searchEmails = request.actor?.user.isAdmin === true;
      const { rows, total } = await users.list({ username, search, searchEmails, active, blocked, humans }, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((u) => (request.actor?.user.isAdmin ? mapUserWithAdmin(u, base) : mapUserBasic(u, base)));
    },
  );

  app.get(
    '/users/:id',
    {
      schema: { summary: 'Shows a user', operationId: 'getUser', tags: ['users'], params: S.UserIdParams, response: { 200: S.AnyUser } },
      config: { policy: { auth: 'optional', scopes: ['read_user'] } },
    },
    async (request) => {
      if (!request.actor) throw new ForbiddenError('Not authorized!');
      return present(await users.get(request.params.id), request.actor);
    },
  );

  app.post(
    '/users',
    {
      schema: { summary: 'Creates a user', tags: ['users'], body: S.CreateUserBody, response: { 201: S.UserWithAdmin } },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request, reply) => {
      const user = await users.create(request.body);
      return reply.code(201).send(mapUserWithAdmin(user, base));
    },
  );

  app.put(
    '/users/:id',
    {
      schema: {
        summary: 'Updates a user',
        tags: ['users'],
        params: S.UserIdParams,
        body: S.UpdateUserBody,
        response: { 200: S.UserWithAdmin },
      },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request) => {
      await users.get(request.params.id);
      const credential = request.actor?.credential;
      const session = credential?.kind === 'session' ? credential.id : undefined;
      return mapUserWithAdmin(await users.update(request.params.id, request.body, session), base);
    },
  );

  app.post(
    '/users/:id/block',
    {
      schema: { summary: 'Blocks a user', tags: ['users'], params: S.UserIdParams, response: { 201: Type.Boolean() } },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request, reply) => {
      await users.setState(request.params.id, 'blocked');
      return reply.code(201).send(true);
    },
  );

  app.post(
    '/users/:id/unblock',
    {
      schema: { summary: 'Unblocks a user', tags: ['users'], params: S.UserIdParams, response: { 201: Type.Boolean() } },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request, reply) => {
      await users.setState(request.params.id, 'active');
      return reply.code(201).send(true);
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
      const created = await tokens.createOwn(actorOf(request), request.body);
      return reply.code(201).send(mapToken(created.row, now(), created.token));
    },
  );

  app.post(
    '/users/:user_id/personal_access_tokens',
    {
      schema: {
        summary: 'Creates a personal access token for a user',
        operationId: 'createUserPersonalAccessToken',
        tags: ['tokens'],
        params: S.UserTokenParams,
        body: S.CreateTokenBody,
        response: { 201: S.AccessTokenWithSecret },
      },
      config: { policy: { auth: 'required', admin: true }, secret: true },
    },
    async (request, reply) => {
      const user = await users.get(request.params.user_id);
      const created = await tokens.create(user.id, 'personal', request.body, { createdById: actorOf(request).user.id });
      return reply.code(201).send(mapToken(created.row, now(), created.token));
    },
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
      const actor = actorOf(request);
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
      return mapToken(await ownTokenOr404(request.params.id, actorOf(request)), now());
    },
  );

  app.delete(
    '/personal_access_tokens/:id',
    {
      schema: { summary: 'Revokes a personal access token', tags: ['tokens'], params: S.TokenIdParams, response: { 204: NoContent } },
      config: { policy: { auth: 'required' } },
    },
    async (request, reply) => {
      const row = await ownTokenOr404(request.params.id, actorOf(request));
      await tokens.revoke(row);
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
      const row = await ownTokenOr404(request.params.id, actorOf(request));
      if (row.revoked === 1) throw new UnauthorizedError();
      const created = await tokens.rotate(row, request.body?.expires_at);
      return mapToken(created.row, now(), created.token);
    },
  );

  app.post(
    '/users/:user_id/impersonation_tokens',
    {
      schema: {
        summary: 'Creates an impersonation token for a user',
        tags: ['tokens'],
        params: S.UserTokenParams,
        body: S.CreateTokenBody,
        response: { 201: S.AccessTokenWithSecret },
      },
      config: { policy: { auth: 'required', admin: true }, secret: true },
    },
    async (request, reply) => {
      const user = await users.get(request.params.user_id);
      const created = await tokens.create(user.id, 'impersonation', request.body, { createdById: actorOf(request).user.id });
      return reply.code(201).send(mapToken(created.row, now(), created.token));
    },
  );

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
      const row = await tokens.findById(request.params.token_id);
      if (!row || row.user_id !== request.params.user_id || row.kind !== 'impersonation') throw new NotFoundError('Impersonation Token');
      return mapToken(row, now());
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
      const row = await tokens.findById(request.params.token_id);
      if (!row || row.user_id !== request.params.user_id || row.kind !== 'impersonation') throw new NotFoundError('Impersonation Token');
      await tokens.revoke(row);
      return reply.code(204).send(null);
    },
  );
}
