import { Type } from '@sinclair/typebox';
import type { UserRow } from '../identity/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { deepestPage } from '../../infra/http/index.js';
import { sendPage } from '../../web/index.js';
import type { IdentityModule } from '../identity/index.js';
import { namespaceCrumbs, type ProjectRow, type ProjectsModule } from '../projects/index.js';
import { ACTIONS } from './events.actions.js';
import { projectActivityPage, type ActivityItem } from './events.pages.js';
import { mapEvent, userIdsOf } from './events.presenter.js';
import type { EventDetail, EventsService } from './events.service.js';
import type { EventFilter } from './events.repository.js';

/** A project's activity page, at the established product's address. */
export const activityPath = (fullPath: string) => `/${fullPath}/-/activity`;
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

function describeTarget(e: Presented, project: ProjectRow | undefined): Pick<ActivityItem, 'target' | 'targetHref' | 'detail'> {
  const push = 'push_data' in e ? e.push_data : undefined;
  const issueHref = (iid: number | null | undefined) => (project && iid ? `/${project.full_path}/-/issues/${iid}` : null);
  if (push) {
    const what =
      push.ref_count !== null ? `${push.ref_count} ${push.ref_type === 'tag' ? 'tags' : 'branches'}` : `${push.ref_type} ${push.ref ?? ''}`;
    const commits = push.commit_count ? `${push.commit_count} commit${push.commit_count === 1 ? '' : 's'}` : null;
    return { target: what, targetHref: null, detail: [commits, push.commit_title].filter(Boolean).join(' · ') || null };
  }
  if (e.target_type === 'Issue')
    return { target: `issue #${e.target_iid ?? ''} ${e.target_title ?? ''}`, targetHref: issueHref(e.target_iid), detail: null };
  if (e.target_type === 'Snippet')
    return {
      target: `snippet ${e.target_title ?? ''}`,
      targetHref: e.target_id ? (project ? `/${project.full_path}/-/snippets/${e.target_id}` : `/-/snippets/${e.target_id}`) : null,
      detail: null,
    };
  if ('note' in e && e.note) {
    const onIssue = e.note.noteable_type === 'Issue' && e.note.noteable_iid;
    return {
      target: onIssue ? `issue #${e.note.noteable_iid}` : (e.note.noteable_type ?? ''),
      targetHref: onIssue ? issueHref(e.note.noteable_iid) : null,
      detail: e.note.body,
    };
  }
  return { target: 'the project', targetHref: null, detail: null };
}

/**
 * Events put into words for an activity list; `withProject` names each event's project (lists
 * that span projects). The noteable's iid is asked for (project lists' shape) to link comments.
 */
export function activityItems(
  rows: readonly EventDetail[],
  users: Map<number, UserRow>,
  projects: Map<number, ProjectRow>,
  externalUrl: string,
  withProject: boolean,
): ActivityItem[] {
  return rows.map((row) => {
    const e = mapEvent(row, users, externalUrl, true);
    const project = row.project_id === null ? undefined : projects.get(row.project_id);
    return {
      id: e.id,
      author: e.author_username ?? 'someone',
      authorName: e.author?.name ?? '',
      action: e.action_name,
      at: e.created_at,
      project: withProject && project ? { name: project.name, fullPath: project.full_path } : null,
      ...describeTarget(e, project),
    };
  });
}

/** The users and projects a page of events names, read once each. */
export async function activityContext(rows: readonly EventDetail[], identity: IdentityModule, projects: ProjectsModule) {
  const ids = [...new Set(rows.map((r) => r.project_id).filter((id): id is number => id !== null))];
  const [users, found] = await Promise.all([
    identity.users.mapByIds(userIdsOf(rows)),
    Promise.all(ids.map((id) => projects.projects.findById(id))),
  ]);
  return { users, projects: new Map(found.filter((p): p is ProjectRow => p !== undefined).map((p) => [p.id, p])) };
}

const ProjectParams = Type.Object({ project: Type.String({ minLength: 1, maxLength: 1024 }) });
const ActivityQuery = Type.Object({
  filter: Type.Optional(Type.String({ maxLength: 20 })),
  page: Type.Optional(Type.String({ maxLength: 10 })),
});

/**
 * `/<full_path>/-/activity` (`/-/p/:project/activity` on the page layer); the former address
 * `/-/projects/:id/activity` (an id or URL-encoded full path) answers 301 to it.
 */
export function activityPages(
  web: ApiApp,
  deps: { service: EventsService; identity: IdentityModule; projects: ProjectsModule; externalUrl: string },
): void {
  const { service, identity, projects, externalUrl } = deps;
  web.get(
    '/-/p/:project/activity',
    { schema: { params: ProjectParams, querystring: ActivityQuery }, config: { page: { signIn: 'optional', project: 0 } } },
    async (request, reply) => {
      const { row, level } = request.page.project!;
      const project = row as ProjectRow;
      const filterKey = request.query.filter && request.query.filter in FILTERS ? request.query.filter : 'all';
      const pageNumber = Math.min(Math.max(1, Number.parseInt(request.query.page ?? '1', 10) || 1), deepestPage(PER_PAGE));
      const result = await service.listForProject(
        request.page.actor,
        project,
        level,
        { sort: 'desc', ...FILTERS[filterKey] },
        PER_PAGE,
        (pageNumber - 1) * PER_PAGE,
      );
      const users = await identity.users.mapByIds(userIdsOf(result.rows));
      const namespace = await projects.projects.namespaceOf(project);
      return sendPage(
        reply,
        projectActivityPage({
          title: `Activity · ${project.name}`,
          page: request.page,
          crumbs: [
            ...(await namespaceCrumbs(projects, namespace, request.page.actor)),
            { label: project.name, href: `/${project.full_path}` },
            { label: 'Activity' },
          ],
          project: { fullPath: project.full_path, name: project.name, level, current: 'activity' },
          basePath: activityPath(project.full_path),
          filter: filterKey,
          items: activityItems(result.rows, users, new Map([[project.id, project]]), externalUrl, false),
          pageNumber,
          hasNext: pageNumber * PER_PAGE < result.total,
        }),
      );
    },
  );

  web.get(
    '/-/projects/:project/activity',
    { schema: { params: ProjectParams }, config: { page: { signIn: 'optional', project: 0 } } },
    async (request, reply) => {
      const project = request.page.project!.row as ProjectRow;
      const at = request.url.indexOf('?');
      return reply.redirect(`${activityPath(project.full_path)}${at < 0 ? '' : request.url.slice(at)}`, 301);
    },
  );
}
