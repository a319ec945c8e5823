import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { requireActor } from '../../infra/auth/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { NoContent } from '../../infra/http/openapi-schemas.js';
import type { Platform } from '../../infra/platform.js';
import { mapResourceToken } from './identity.presenter.js';
import * as S from './identity.schemas.js';
import {
  TOKEN_MANAGER_LEVEL,
  type MembershipPort,
  type ResourceKind,
  type ResourceRef,
  type ResourceTokensService,
} from './resource-tokens.service.js';

/** What the routes need from the projects module: its ProjectLookup fits. */
export interface ResourceLookupPort {
  project(request: FastifyRequest, ref: string, minLevel?: number): Promise<{ project: { id: number; full_path: string }; level: number }>;
  group(request: FastifyRequest, ref: string, minLevel?: number): Promise<{ group: { id: number; full_path: string }; level: number }>;
}

export interface ResourceTokenRouteDeps {
  platform: Platform;
  service: ResourceTokensService;
  lookup: ResourceLookupPort;
  members: MembershipPort;
}

/** `rotate` is usually called with no body at all; read that as `{}`. */
export async function emptyBodyAsObject(request: FastifyRequest): Promise<void> {
  request.body ??= {};
}

/**
 * `/projects/:id/access_tokens` and `/groups/:id/access_tokens`: create, list, show, revoke,
 * rotate. Project tokens need a Maintainer, group tokens an Owner (`TOKEN_MANAGER_LEVEL`); what
 * the caller cannot see is a 404.
 */
export function resourceTokenRoutes(app: ApiApp, { platform, service, lookup, members }: ResourceTokenRouteDeps): void {
  const now = () => platform.clock.now();

  for (const kind of ['project', 'group'] as const satisfies readonly ResourceKind[]) {
    const base = `/${kind}s/:id/access_tokens`;
    const resolve = async (request: FastifyRequest, ref: string): Promise<ResourceRef> => {
      const min = TOKEN_MANAGER_LEVEL[kind];
      const found = kind === 'project' ? await lookup.project(request, ref, min) : await lookup.group(request, ref, min);
      service.checkAvailable(kind);
      const row = 'project' in found ? found.project : found.group;
      return { kind, id: row.id, level: found.level, path: row.full_path };
    };
    const policy = { policy: { auth: 'required' as const } };
    // Creation and rotation answer the new token's secret.
    const secret = { ...policy, secret: true };

    const tags = ['tokens'];
    const schema = {
      create: {
        summary: `Creates a ${kind} access token`,
        tags,
        params: S.ResourceParams,
        body: S.CreateResourceTokenBody,
        response: { 201: S.ResourceAccessTokenWithSecret },
      },
      list: {
        summary: `Lists a ${kind}'s access tokens`,
        tags,
        params: S.ResourceParams,
        querystring: S.ResourceTokenListQuery,
        response: { 200: Type.Array(S.ResourceAccessToken) },
      },
      show: { summary: `Shows a ${kind} access token`, tags, params: S.ResourceTokenParams, response: { 200: S.ResourceAccessToken } },
      revoke: { summary: `Revokes a ${kind} access token`, tags, params: S.ResourceTokenParams, response: { 204: NoContent } },
      rotate: {
        summary: `Rotates a ${kind} access token`,
        tags,
        params: S.ResourceTokenParams,
        body: S.RotateTokenBody,
        response: { 200: S.ResourceAccessTokenWithSecret },
      },
    };

    app.post(base, { schema: schema.create, config: secret }, async (request, reply) => {
      const actor = requireActor(request);
      const resource = await resolve(request, request.params.id);
      const created = await service.create(actor, resource, request.body, members);
      return reply.code(201).send(mapResourceToken(created.row, now(), created.token));
    });

    app.get(base, { schema: schema.list, config: policy }, async (request, reply) => {
      const resource = await resolve(request, request.params.id);
      const page = pageOf(request.query);
      const { rows, total } = await service.list(resource, request.query.state, page.limit, page.offset);
      setPaginationHeaders(request, reply, page, total, platform.config.externalUrl);
      return rows.map((row) => mapResourceToken(row, now()));
    });

    app.get(`${base}/:token_id`, { schema: schema.show, config: policy }, async (request) => {
      const resource = await resolve(request, request.params.id);
      return mapResourceToken(await service.get(resource, request.params.token_id), now());
    });

    app.delete(`${base}/:token_id`, { schema: schema.revoke, config: policy }, async (request, reply) => {
      const actor = requireActor(request);
      const resource = await resolve(request, request.params.id);
      await service.revoke(actor, resource, await service.get(resource, request.params.token_id), members);
      return reply.code(204).send(null);
    });

    app.post(`${base}/:token_id/rotate`, { schema: schema.rotate, config: secret, preValidation: emptyBodyAsObject }, async (request) => {
      const resource = await resolve(request, request.params.id);
      const row = await service.get(resource, request.params.token_id);
      const created = await service.rotate(resource, row, request.body?.expires_at, members, requireActor(request));
      return mapResourceToken(created.row, now(), created.token);
    });
  }
}
