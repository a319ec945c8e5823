import type { FastifyRequest } from 'fastify';
import { ValidationError, type ValidationMessages } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { AccessLevel } from '../projects/index.js';
import type { AuditDeps } from './audit.deps.js';
import type { AuditFilter } from './audit.repository.js';
import { mapAuditEvent } from './audit.presenter.js';
import type { AuditScope } from './audit.service.js';
import * as S from './audit.schemas.js';

/** An ISO 8601 time of a filter, in epoch milliseconds; a message when it does not parse. */
function instant(value: string | undefined, field: string, messages: ValidationMessages): number | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) messages[field] = ['is invalid'];
  return ms;
}

/** `created_after`, `created_before` (inclusive), `entity_type` and `entity_id` (which needs the type). */
function filterOf(query: { created_after?: string; created_before?: string; entity_type?: string; entity_id?: number }): AuditFilter {
  const messages: ValidationMessages = {};
  const createdAfter = instant(query.created_after, 'created_after', messages);
  const createdBefore = instant(query.created_before, 'created_before', messages);
  if (query.entity_id !== undefined && query.entity_type === undefined) messages.entity_type = ['is missing'];
  if (Object.keys(messages).length > 0) throw new ValidationError(messages);
  return {
    ...(createdAfter !== undefined ? { createdAfter } : {}),
    ...(createdBefore !== undefined ? { createdBefore } : {}),
    ...(query.entity_type !== undefined ? { entityType: query.entity_type } : {}),
    ...(query.entity_id !== undefined ? { entityId: query.entity_id } : {}),
  };
}

/**
 * The established product's audit events API: every event for administrators
 * (`/audit_events`), a group's or a project's for its Owners and Maintainers (and
 * administrators). Lists are newest first and paginated as every list is.
 */
export function auditRoutes(app: ApiApp, deps: AuditDeps): void {
  const { audit, lookup, platform } = deps;
  const base = platform.config.externalUrl;
  const tags = ['audit_events'];
  const adminPolicy = { auth: 'required' as const, admin: true };
  const policy = { auth: 'required' as const };

  app.get(
    '/audit_events',
    {
      schema: {
        summary: 'Lists instance audit events (administrators)',
        tags,
        querystring: S.InstanceListQuery,
        response: { 200: S.AuditEventList },
      },
      config: { policy: adminPolicy },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const { rows, total } = await audit.list({ kind: 'instance' }, filterOf(request.query), page);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map(mapAuditEvent);
    },
  );

  app.get(
    '/audit_events/:audit_event_id',
    {
      schema: { summary: 'Shows an instance audit event (administrators)', tags, params: S.EventParams, response: { 200: S.AuditEvent } },
      config: { policy: adminPolicy },
    },
    async (request) => mapAuditEvent(await audit.get({ kind: 'instance' }, request.params.audit_event_id)),
  );

  const scopes = [
    {
      path: '/groups/:id/audit_events',
      thing: 'group',
      scope: async (request: FastifyRequest, ref: string): Promise<AuditScope> => ({
        kind: 'Group',
        id: (await lookup.group(request, ref, AccessLevel.MAINTAINER)).group.id,
      }),
    },
    {
      path: '/projects/:id/audit_events',
      thing: 'project',
      scope: async (request: FastifyRequest, ref: string): Promise<AuditScope> => ({
        kind: 'Project',
        id: (await lookup.project(request, ref, AccessLevel.MAINTAINER)).project.id,
      }),
    },
  ] as const;

  for (const { path, thing, scope } of scopes) {
    app.get(
      path,
      {
        schema: {
          summary: `Lists a ${thing}'s audit events`,
          tags,
          params: S.ScopedParams,
          querystring: S.ListQuery,
          response: { 200: S.AuditEventList },
        },
        config: { policy },
      },
      async (request, reply) => {
        const within = await scope(request, request.params.id);
        const page = pageOf(request.query);
        const { rows, total } = await audit.list(within, filterOf(request.query), page);
        setPaginationHeaders(request, reply, page, total, base);
        return rows.map(mapAuditEvent);
      },
    );
    app.get(
      `${path}/:audit_event_id`,
      {
        schema: { summary: `Shows one of a ${thing}'s audit events`, tags, params: S.ScopedEventParams, response: { 200: S.AuditEvent } },
        config: { policy },
      },
      async (request) => mapAuditEvent(await audit.get(await scope(request, request.params.id), request.params.audit_event_id)),
    );
  }
}
