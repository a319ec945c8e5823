import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, weakEtag, type ApiApp } from '../../infra/http/index.js';
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
  app.get('/user', { config: { policy: { auth: 'required', scopes: ['read_user'] } } }, async (request, reply) => {
    const actor = actorOf(request);
    const user = await users.getOwn(actor.user.id);
    const admin = actor.user.isAdmin;
    let body = ownBodies.get(user);
    if (!body || body.admin !== admin) {
      const json = JSON.stringify(admin ? mapUserWithAdmin(user, base) : mapUserPublic(user, base));
      body = { admin, json, etag: weakEtag(json) };
      ownBodies.set(user, body);
    }
    return reply.type('application/json; charset=utf-8').header('etag', body.etag).send(body.json);
  });

  app.get(
    '/users',
    { schema: { querystring: S.ListUsersQuery }, config: { policy: { auth: 'optional', scopes: ['read_user'] } } },
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
    { schema: { params: S.UserIdParams }, config: { policy: { auth: 'optional', scopes: ['read_user'] } } },
    async (request) => {
      if (!request.actor) throw new ForbiddenError('Not authorized!');
      return present(await users.get(request.params.id), request.actor);
    },
  );

  app.post(
    '/users',
    { schema: { body: S.CreateUserBody }, config: { policy: { auth: 'required', admin: true } } },
    async (request, reply) => {
      const user = await users.create(request.body);
      return reply.code(201).send(mapUserWithAdmin(user, base));
    },
  );

  app.put(
    '/users/:id',
    { schema: { params: S.UserIdParams, body: S.UpdateUserBody }, config: { policy: { auth: 'required', admin: true } } },
    async (request) => {
      await users.get(request.params.id);
      const credential = request.actor?.credential;
      const session = credential?.kind === 'session' ? credential.id : undefined;
      return mapUserWithAdmin(await users.update(request.params.id, request.body, session), base);
    },
  );

  app.post(
    '/users/:id/block',
    { schema: { params: S.UserIdParams }, config: { policy: { auth: 'required', admin: true } } },
    async (request, reply) => {
      await users.setState(request.params.id, 'blocked');
      return reply.code(201).send(true);
    },
  );

  app.post(
    '/users/:id/unblock',
    { schema: { params: S.UserIdParams }, config: { policy: { auth: 'required', admin: true } } },
    async (request, reply) => {
      await users.setState(request.params.id, 'active');
      return reply.code(201).send(true);
    },
  );

  app.post(
    '/user/personal_access_tokens',
    { schema: { body: S.CreateTokenBody }, config: { policy: { auth: 'required' }, secret: true } },
    async (request, reply) => {
      const created = await tokens.createOwn(actorOf(request), request.body);
      return reply.code(201).send(mapToken(created.row, now(), created.token));
    },
  );

  app.post(
    '/users/:user_id/personal_access_tokens',
    { schema: { params: S.UserTokenParams, body: S.CreateTokenBody }, config: { policy: { auth: 'required', admin: true }, secret: true } },
    async (request, reply) => {
      const user = await users.get(request.params.user_id);
      const created = await tokens.create(user.id, 'personal', request.body, { createdById: actorOf(request).user.id });
      return reply.code(201).send(mapToken(created.row, now(), created.token));
    },
  );

  app.get(
    '/personal_access_tokens',
    { schema: { querystring: S.ListTokensQuery }, config: { policy: { auth: 'required' } } },
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
    { schema: { params: S.TokenIdParams }, config: { policy: { auth: 'required' } } },
    async (request) => {
      return mapToken(await ownTokenOr404(request.params.id, actorOf(request)), now());
    },
  );

  app.delete(
    '/personal_access_tokens/:id',
    { schema: { params: S.TokenIdParams }, config: { policy: { auth: 'required' } } },
    async (request, reply) => {
      const row = await ownTokenOr404(request.params.id, actorOf(request));
      await tokens.revoke(row);
      return reply.code(204).send();
    },
  );

  app.post(
    '/personal_access_tokens/:id/rotate',
    {
      schema: { params: S.TokenIdParams, body: S.RotateTokenBody },
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
    { schema: { params: S.UserTokenParams, body: S.CreateTokenBody }, config: { policy: { auth: 'required', admin: true }, secret: true } },
    async (request, reply) => {
      const user = await users.get(request.params.user_id);
      const created = await tokens.create(user.id, 'impersonation', request.body, { createdById: actorOf(request).user.id });
      return reply.code(201).send(mapToken(created.row, now(), created.token));
    },
  );

  app.get(
    '/users/:user_id/impersonation_tokens',
    { schema: { params: S.UserTokenParams, querystring: S.ImpersonationListQuery }, config: { policy: { auth: 'required', admin: true } } },
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
    { schema: { params: S.ImpersonationParams }, config: { policy: { auth: 'required', admin: true } } },
    async (request) => {
      const row = await tokens.findById(request.params.token_id);
      if (!row || row.user_id !== request.params.user_id || row.kind !== 'impersonation') throw new NotFoundError('Impersonation Token');
      return mapToken(row, now());
    },
  );

  app.delete(
    '/users/:user_id/impersonation_tokens/:token_id',
    { schema: { params: S.ImpersonationParams }, config: { policy: { auth: 'required', admin: true } } },
    async (request, reply) => {
      const row = await tokens.findById(request.params.token_id);
      if (!row || row.user_id !== request.params.user_id || row.kind !== 'impersonation') throw new NotFoundError('Impersonation Token');
      await tokens.revoke(row);
      return reply.code(204).send();
    },
  );
}
