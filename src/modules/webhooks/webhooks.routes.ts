import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { UnauthorizedError, UnprocessableError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import type { HookRow } from './hooks.repository.js';
import type { ResolvedOwner, WebhooksDeps } from './webhooks.deps.js';
import { mapGroupHook, mapProjectHook } from './webhooks.presenter.js';
import * as S from './webhooks.schemas.js';
import { WEB_HOOK_TEST_LIMIT, webHookTestKey } from './webhooks.limits.js';

/** One owner kind's routes: its address, words, lookup and answer shapes. */
interface OwnerRoutes {
  prefix: string;
  word: 'project' | 'group';
  tags: string[];
  resolve(request: FastifyRequest, ref: string): Promise<ResolvedOwner>;
  map(row: HookRow, now: number): Record<string, unknown>;
  one: TSchema;
  many: TSchema;
}

/**
 * `/projects/:id/hooks` and `/groups/:id/hooks` in the established product's shape: Maintainer
 * and above for a project's hooks, Owner for a group's (Premium and Ultimate). The token is taken,
 * never answered.
 */
export function webhooksRoutes(app: ApiApp, deps: WebhooksDeps): void {
  const policy = { auth: 'required' } as const;
  const owners: readonly OwnerRoutes[] = [
    {
      prefix: '/projects/:id/hooks',
      word: 'project',
      tags: ['webhooks'],
      resolve: deps.projectOwner,
      map: mapProjectHook,
      one: S.ProjectHook,
      many: S.ProjectHookList,
    },
    {
      prefix: '/groups/:id/hooks',
      word: 'group',
      tags: ['webhooks'],
      resolve: deps.groupOwner,
      map: mapGroupHook,
      one: S.GroupHook,
      many: S.GroupHookList,
    },
  ];
  const { hooks, deliveries, samples, platform } = deps;
  const base = platform.config.externalUrl;

  for (const o of owners) {
    const Word = o.word === 'project' ? 'Project' : 'Group';
    const present = (row: HookRow) => o.map(row, platform.clock.now());
    const resolve = (request: FastifyRequest<{ Params: { id: string } }>): Promise<ResolvedOwner> => o.resolve(request, request.params.id);

    app.get(
      o.prefix,
      {
        schema: {
          summary: `Lists the ${o.word}'s webhooks`,
          tags: o.tags,
          params: S.OwnerParams,
          querystring: S.ListHooksQuery,
          response: { 200: o.many },
        },
        config: { policy },
      },
      async (request, reply) => {
        const { owner } = await resolve(request);
        const page = pageOf(request.query);
        const { rows, total } = await hooks.listPage(owner, page);
        setPaginationHeaders(request, reply, page, total, base);
        return rows.map(present);
      },
    );

    app.post(
      o.prefix,
      {
        schema: {
          summary: `Adds a webhook to the ${o.word}`,
          tags: o.tags,
          params: S.OwnerParams,
          body: S.CreateHookBody,
          response: { 201: o.one },
        },
        config: { policy },
      },
      async (request, reply) => {
        const { owner } = await resolve(request);
        return reply.code(201).send(present(await hooks.create(owner, request.body)));
      },
    );

    app.get(
      `${o.prefix}/:hook_id`,
      {
        schema: { summary: `Shows a ${o.word} webhook`, tags: o.tags, params: S.HookParams, response: { 200: o.one } },
        config: { policy },
      },
      async (request) => {
        const { owner } = await resolve(request);
        return present(await hooks.get(owner, request.params.hook_id));
      },
    );

    app.put(
      `${o.prefix}/:hook_id`,
      {
        schema: {
          summary: `Edits a ${o.word} webhook (and re-enables it)`,
          tags: o.tags,
          params: S.HookParams,
          body: S.UpdateHookBody,
          response: { 200: o.one },
        },
        config: { policy },
      },
      async (request) => {
        const { owner } = await resolve(request);
        return present(await hooks.update(owner, request.params.hook_id, request.body));
      },
    );

    app.delete(
      `${o.prefix}/:hook_id`,
      {
        schema: { summary: `Removes a ${o.word} webhook`, tags: o.tags, params: S.HookParams, response: { 204: Type.Null() } },
        config: { policy },
      },
      async (request, reply) => {
        const { owner } = await resolve(request);
        await hooks.remove(owner, request.params.hook_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      `${o.prefix}/:hook_id/test/:trigger`,
      {
        schema: {
          summary: `Sends a test delivery of one trigger to a ${o.word} webhook now`,
          operationId: `test${Word}Hook`,
          tags: o.tags,
          params: S.TestParams,
          response: { 201: S.TestAnswer },
        },
        config: { policy },
      },
      async (request, reply) => {
        const resolved = await resolve(request);
        const hook = await hooks.get(resolved.owner, request.params.hook_id);
        const actor = request.actor;
        if (!actor) throw new UnauthorizedError();
        // 429 with Retry-After and RateLimit-* past `web_hook_test` (per user and hook, pages included).
        await platform.limiter.enforce(WEB_HOOK_TEST_LIMIT, webHookTestKey(hook, actor), platform.config.rateLimits.web_hook_test);
        const sample = await samples.build(await resolved.project(actor), request.params.trigger, actor);
        const outcome = await deliveries.test(hook, sample);
        if (!outcome.ok) throw new UnprocessableError(`Hook execution failed: ${outcome.error}`);
        return reply.code(201).send({ message: '201 Created' });
      },
    );
  }
}
