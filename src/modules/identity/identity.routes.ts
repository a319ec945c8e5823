import { Type, type Static } from '@sinclair/typebox';
import { type Actor, requireActor } from '../../infra/auth/index.js';
import { ForbiddenError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, weakEtag, type ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import { mapUser, mapUserBasic, mapUserPublic, mapUserWithAdmin } from './identity.presenter.js';
import * as S from './identity.schemas.js';
import { personalTokenRoutes } from './personal-tokens.routes.js';
import type { TokensService } from './tokens.service.js';
import type { UserRow } from './users.repository.js';
import type { UsersService } from './users.service.js';

export interface IdentityRouteDeps {
  platform: Platform;
  users: UsersService;
  tokens: TokensService;
}

/**
 * Users and their tokens (DESIGN.md §4); the tokens' routes are in personal-tokens.routes.ts.
 * Policy sits beside each route.
 */
export function identityRoutes(app: ApiApp, { platform, users, tokens }: IdentityRouteDeps): void {
  const base = platform.config.externalUrl;
  const present = (user: UserRow, viewer: Actor | null) => {
    if (viewer?.user.isAdmin) return mapUserWithAdmin(user, base);
    if (viewer?.user.id === user.id) return mapUserPublic(user, base);
    return mapUser(user, base, viewer?.user ?? null);
  };

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
      const actor = requireActor(request);
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
      const user = await users.create(request.body, undefined, { by: request.actor });
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
      return mapUserWithAdmin(await users.update(request.params.id, request.body, session, request.actor), base);
    },
  );

  app.post(
    '/users/:id/block',
    {
      schema: { summary: 'Blocks a user', tags: ['users'], params: S.UserIdParams, response: { 201: Type.Boolean() } },
      config: { policy: { auth: 'required', admin: true } },
    },
    async (request, reply) => {
      await users.setState(request.params.id, 'blocked', request.actor);
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
      await users.setState(request.params.id, 'active', request.actor);
      return reply.code(201).send(true);
    },
  );

  personalTokenRoutes(app, { platform, users, tokens });
}
