import type { FastifyInstance } from 'fastify';
import { AppError } from '../../infra/errors/index.js';
import { deepestPage } from '../../infra/http/index.js';
import { sendPage } from '../../web/layout.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';
import { ACTIONS } from './events.actions.js';
import { activityPage, type ActivityItem } from './events.pages.js';
import { mapEvent, userIdsOf } from './events.presenter.js';
import type { EventsService } from './events.service.js';
import type { EventFilter } from './events.repository.js';

/** Pages live under `/-/`, which no group, user or project path can take (reserved names). */
export const activityPath = (ref: string) => `/-/projects/${encodeURIComponent(ref)}/activity`;
const PER_PAGE = 30;

/** The page's tabs, as the API filters they stand for. */
const FILTERS: Record<string, Omit<EventFilter, 'sort'>> = {
  all: {},
  push: { action: ACTIONS.pushed },
  issue: { targetType: 'Issue' },
  comments: { action: ACTIONS.commented },
  team: { action: ACTIONS.joined },
};

type Presented = ReturnType<typeof mapEvent>;

function describeTarget(e: Presented): { target: string; detail: string | null } {
  const push = 'push_data' in e ? e.push_data : undefined;
  if (push) {
    const what =
      push.ref_count !== null ? `${push.ref_count} ${push.ref_type === 'tag' ? 'tags' : 'branches'}` : `${push.ref_type} ${push.ref ?? ''}`;
    const commits = push.commit_count ? `${push.commit_count} commit${push.commit_count === 1 ? '' : 's'}` : null;
    return { target: what, detail: [commits, push.commit_title].filter(Boolean).join(' · ') || null };
  }
  if (e.target_type === 'Issue') return { target: `issue #${e.target_iid ?? ''} ${e.target_title ?? ''}`, detail: null };
  if (e.target_type === 'Snippet') return { target: `snippet ${e.target_title ?? ''}`, detail: null };
  if ('note' in e && e.note) {
    const on = e.note.noteable_type === 'Issue' && e.note.noteable_iid ? `issue #${e.note.noteable_iid}` : (e.note.noteable_type ?? '');
    return { target: on, detail: e.note.body };
  }
  return { target: 'the project', detail: null };
}

/** `GET /-/projects/:id/activity` (`:id` a project id or URL-encoded full path). */
export function activityPageRoutes(
  app: FastifyInstance,
  deps: { service: EventsService; identity: IdentityModule; projects: ProjectsModule; externalUrl: string },
): void {
  const { service, identity, projects, externalUrl } = deps;
  app.get<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>(
    '/-/projects/:id/activity',
    { config: { policy: { auth: 'none' } } },
    async (request, reply) => {
      const actor = await identity.pageAuth.currentUser(request);
      const found = await projects.projects.findByRef(request.params.id);
      let access;
      try {
        // A moved project redirects only those who may read it; others get what a missing one gets.
        access = await projects.access.checkProject(actor, found.row ?? found.target);
        if (found.movedTo) return reply.redirect(activityPath(found.movedTo), 301);
      } catch (error) {
        // Anonymous visitors may see more after signing in; signed-in users get the 404.
        if (!actor) return (await identity.pageAuth.requireSignedIn(request, reply)) ?? reply;
        if (error instanceof AppError) return reply.code(404).type('text/plain').send('404 Project Not Found');
        throw error;
      }
      const { project, level } = access;
      const filterKey = request.query.filter && request.query.filter in FILTERS ? request.query.filter : 'all';
      const pageNumber = Math.min(Math.max(1, Number.parseInt(request.query.page ?? '1', 10) || 1), deepestPage(PER_PAGE));
      const result = await service.listForProject(
        actor,
        project,
        level,
        { sort: 'desc', ...FILTERS[filterKey] },
        PER_PAGE,
        (pageNumber - 1) * PER_PAGE,
      );
      const users = await identity.users.mapByIds(userIdsOf(result.rows));
      const items: ActivityItem[] = result.rows.map((row) => {
        const e = mapEvent(row, users, externalUrl, true);
        return {
          id: e.id,
          author: e.author_username ?? 'someone',
          authorName: e.author?.name ?? '',
          action: e.action_name,
          at: e.created_at,
          ...describeTarget(e),
        };
      });
      return sendPage(
        reply,
        activityPage({
          projectName: project.name,
          projectPath: project.full_path,
          basePath: activityPath(project.full_path),
          username: actor?.user.username ?? null,
          csrf: actor ? identity.pageAuth.pageCsrf(request, reply) : undefined,
          filter: filterKey,
          items,
          page: pageNumber,
          hasNext: pageNumber * PER_PAGE < result.total,
        }),
      );
    },
  );
}
