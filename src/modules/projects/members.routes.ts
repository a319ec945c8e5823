import { Type } from '@sinclair/typebox';
import { requireActor } from '../../infra/auth/index.js';
import type { FastifyRequest } from 'fastify';
import { NotFoundError } from '../../infra/errors/index.js';
import { pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { AccessLevel } from './access.policy.js';
import type { UserRow } from '../identity/index.js';
import * as E from './entities.schemas.js';
import type { MemberRow, SourceKind } from './members.repository.js';
import { mapMember } from './projects.presenter.js';
import * as S from './projects.schemas.js';
import type { ProjectsRouteDeps } from './projects.deps.js';

interface Source {
  kind: SourceKind;
  id: number;
  level: number;
  projectId: number | null;
  /** Sources whose members are inherited (`/members/all`): ancestors of the group or project. */
  inheritedFrom: number[];
}

/** The same member routes for groups and projects. */
export function membersRoutes(app: ApiApp, deps: ProjectsRouteDeps): void {
  const { platform, lookup, members, users, groups, projects } = deps;
  const base = platform.config.externalUrl;
  // A membership outlives its user only in a race with the user's deletion (the row cascades):
  // it is then gone, left out of lists and 404 on its own.
  const present = (member: MemberRow, user: UserRow | undefined) => {
    if (!user) throw new NotFoundError('Member');
    return mapMember(member, user, base);
  };
  const presentAll = (rows: MemberRow[], byId: Map<number, UserRow>) =>
    rows.flatMap((m) => {
      const user = byId.get(m.user_id);
      return user ? [mapMember(m, user, base)] : [];
    });

  const sources: Record<'groups' | 'projects', (request: FastifyRequest, ref: string, min: number) => Promise<Source>> = {
    groups: async (request, ref, min) => {
      const { group, level } = await lookup.group(request, ref, min);
      const ancestry = await groups.ancestry(group);
      return { kind: 'namespace', id: group.id, level, projectId: null, inheritedFrom: ancestry.map((g) => g.id) };
    },
    projects: async (request, ref, min) => {
      const { project, level } = await lookup.project(request, ref, min);
      const ns = await projects.namespaceOf(project);
      const ancestry = ns?.kind === 'group' ? await groups.ancestry(ns) : [];
      return { kind: 'project', id: project.id, level, projectId: project.id, inheritedFrom: ancestry.map((g) => g.id) };
    },
  };

  for (const prefix of ['groups', 'projects'] as const) {
    const find = sources[prefix];
    const manage = prefix === 'groups' ? AccessLevel.OWNER : AccessLevel.MAINTAINER;
    const noun = prefix === 'groups' ? 'group' : 'project';
    const tags = ['members'];

    app.get(
      `/${prefix}/:id/members`,
      {
        schema: {
          summary: `Lists the direct members of a ${noun}`,
          tags,
          params: S.RefParams,
          querystring: S.PageQuery,
          response: { 200: E.MemberList },
        },
        config: { policy: { auth: 'optional' } },
      },
      async (request, reply) => {
        const source = await find(request, request.params.id, 0);
        const page = pageOf(request.query);
        const { rows, total } = await members.list(source.kind, [source.id], page.limit, page.offset);
        const byId = await users.mapByIds(rows.map((r) => r.user_id));
        setPaginationHeaders(request, reply, page, total, base);
        return presentAll(rows, byId);
      },
    );

    app.get(
      `/${prefix}/:id/members/all`,
      {
        schema: {
          summary: `Lists the members of a ${noun}, inherited ones included, each at their highest level`,
          tags,
          params: S.RefParams,
          querystring: S.PageQuery,
          response: { 200: E.MemberList },
        },
        config: { policy: { auth: 'optional' } },
      },
      async (request, reply) => {
        const source = await find(request, request.params.id, 0);
        const page = pageOf(request.query);
        // The highest level wins when a user is a member in several places.
        const { rows, total } = await members.listEffective(source, source.inheritedFrom, page.limit, page.offset);
        const byId = await users.mapByIds(rows.map((r) => r.user_id));
        setPaginationHeaders(request, reply, page, total, base);
        return presentAll(rows, byId);
      },
    );

    app.get(
      `/${prefix}/:id/members/:user_id`,
      {
        schema: { summary: `Shows a direct member of a ${noun}`, tags, params: S.MemberParams, response: { 200: E.Member } },
        config: { policy: { auth: 'optional' } },
      },
      async (request) => {
        const source = await find(request, request.params.id, 0);
        const member = await members.get(source.kind, source.id, request.params.user_id);
        return present(member, await users.findById(member.user_id));
      },
    );

    app.post(
      `/${prefix}/:id/members`,
      {
        schema: { summary: `Adds a member to a ${noun}`, tags, params: S.RefParams, body: S.AddMemberBody, response: { 201: E.Member } },
        config: { policy: { auth: 'required' } },
      },
      async (request, reply) => {
        const source = await find(request, request.params.id, manage);
        const user = await users.findById(request.body.user_id);
        if (!user) throw new NotFoundError('User');
        const member = await members.add(requireActor(request), source.kind, source.id, source.level, request.body, source.projectId);
        return reply.code(201).send(mapMember(member, user, base));
      },
    );

    app.put(
      `/${prefix}/:id/members/:user_id`,
      {
        schema: {
          summary: `Changes the level or expiry of a ${noun} member`,
          tags,
          params: S.MemberParams,
          body: S.UpdateMemberBody,
          response: { 200: E.Member },
        },
        config: { policy: { auth: 'required' } },
      },
      async (request) => {
        const source = await find(request, request.params.id, manage);
        const member = await members.update(
          source.kind,
          source.id,
          request.params.user_id,
          source.level,
          request.body.access_level,
          request.body.expires_at,
          requireActor(request),
        );
        return present(member, await users.findById(member.user_id));
      },
    );

    app.delete(
      `/${prefix}/:id/members/:user_id`,
      {
        schema: { summary: `Removes a member from a ${noun}`, tags, params: S.MemberParams, response: { 204: Type.Null() } },
        config: { policy: { auth: 'required' } },
      },
      async (request, reply) => {
        const actor = requireActor(request);
        // Anyone may leave; removing someone else needs the managing level.
        const source = await find(request, request.params.id, request.params.user_id === actor.user.id ? 0 : manage);
        await members.remove(
          { userId: actor.user.id, level: source.level, ip: request.ip },
          source.kind,
          source.id,
          request.params.user_id,
          source.projectId,
        );
        return reply.code(204).send(null);
      },
    );
  }
}
