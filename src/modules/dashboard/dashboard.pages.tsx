import { Type } from '@sinclair/typebox';
import { renderToString } from 'preact-render-to-string';
import type { Actor } from '../../infra/auth/index.js';
import { VersionCache } from '../../infra/db/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import { EmptyState, Layout, sendPage } from '../../web/index.js';
import { ActivityList, NoActivity, activityContext, activityItems, type ActivityItem } from '../events/index.js';
import { GroupList, Pager, ProjectList, type NamespaceRow, type ProjectRow } from '../projects/index.js';
import type { DashboardDeps } from './dashboard.deps.js';

const SHOWN = 10;
const PER_PAGE = 20;
const ListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 255 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
});
const PageQuery = Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })) });
const signedIn = { page: { signIn: 'required' } } as const;
/** How long a computed dashboard may be shown while nothing is written (memberships expire with time alone). */
const HOME_VIEW_TTL_MS = 10_000;

const NoProjects = () => (
  <EmptyState title="You have no projects yet" action={{ href: '/projects/new', label: 'Create a project' }}>
    A project holds issues, snippets, alerts and errors, and its members.
  </EmptyState>
);

const NoGroups = () => (
  <EmptyState title="You are not in any group yet">
    Groups gather projects and their members. When someone adds you to a group, it shows here.
  </EmptyState>
);

/** The dashboard: what the signed-in person works on, reached from the header. */
export function dashboardPages(web: ApiApp, platform: Platform, deps: DashboardDeps): void {
  const { identity, projects, events } = deps;
  const { externalUrl } = platform.config;

  const myProjects = (actor: Actor, search: string | undefined, limit: number, offset: number) =>
    projects.projects.list(
      actor,
      {
        search,
        memberOf: [{ userId: actor.user.id, minAccess: 0, now: platform.clock.now() }],
        orderBy: 'last_activity_at',
        sort: 'desc',
      },
      limit,
      offset,
    );
  const myGroups = (actor: Actor, search: string | undefined, limit: number, offset: number) =>
    projects.groups.list(
      {
        scope: projects.access.listScope(actor),
        ...(search ? { search } : {}),
        memberOf: [{ userId: actor.user.id, minAccess: 0, direct: false, now: platform.clock.now() }],
      },
      limit,
      offset,
    );
  const myActivity = async (actor: Actor, limit: number, offset: number) => {
    const { rows, total } = await events.service.listForMember(actor, { sort: 'desc' }, limit, offset);
    const context = await activityContext(rows, identity, projects);
    return { items: activityItems(rows, context.users, context.projects, externalUrl, true), total };
  };
  const recentActivity = async (actor: Actor, limit: number) => {
    const rows = await events.service.recentForMember(actor, limit);
    const context = await activityContext(rows, identity, projects);
    return activityItems(rows, context.users, context.projects, externalUrl, true);
  };
  /**
   * What `/` shows a person, kept until the next commit to the database (10 s at most): the
   * page is asked for far more often than what it shows changes, and computing it runs a dozen
   * statements over every project the person can see. Keyed by the person, whose access decides it.
   */
  /**
   * What `/` shows a person below its heading (their projects, groups and recent activity),
   * rendered, kept until the next commit to the database (10 s at most): the page is asked for
   * far more often than what it shows changes, and computing it runs a dozen statements over every
   * project the person can see. Keyed by the person, whose access decides it.
   */
  const homeViews = new VersionCache<string>({
    dataVersion: (scope) => platform.database.dataVersion(scope),
    clock: platform.clock,
    ttlMs: HOME_VIEW_TTL_MS,
    maxEntries: 2000,
    maxBytes: 32 * 1024 * 1024,
  });
  const homeView = (actor: Actor, request: object) =>
    homeViews.through(
      `${actor.user.id}`,
      async () => {
        const [owned, groups, activity] = await Promise.all([
          myProjects(actor, undefined, SHOWN, 0),
          myGroups(actor, undefined, SHOWN, 0),
          recentActivity(actor, SHOWN),
        ]);
        return renderToString(<HomeSections owned={owned} groups={groups} activity={activity} />);
      },
      (html) => html.length,
      request,
    );
  const query = (search: string | undefined, page: number) => {
    const params = new URLSearchParams();
    if (search) params.set('search', search);
    if (page > 1) params.set('page', String(page));
    const text = params.toString();
    return text ? `?${text}` : '';
  };

  // Visitors go to the sign-in page itself, which leads back here (the dashboard) by default.
  web.get('/', { config: { page: { signIn: 'optional' } } }, async (request, reply) => {
    const actor = request.page.actor;
    if (!actor) return reply.redirect('/users/sign_in', 302);
    const sections = await homeView(actor, request);
    return sendPage(
      reply,
      <Layout title="Dashboard" page={request.page}>
        <div class="page-head">
          <h1>Welcome, {actor.user.username}</h1>
          <a class="button" href="/projects/new">
            New project
          </a>
        </div>
        {/* Rendered by HomeSections from escaped values, kept per person (homeViews). */}
        <div class="dashboard" dangerouslySetInnerHTML={{ __html: sections }} />
      </Layout>,
    );
  });

  web.get('/dashboard/projects', { schema: { querystring: ListQuery }, config: signedIn }, async (request, reply) => {
    const actor = request.page.actor!;
    const search = request.query.search?.trim() || undefined;
    const page = request.query.page ?? 1;
    const found = await myProjects(actor, search, PER_PAGE, (page - 1) * PER_PAGE);
    return sendPage(
      reply,
      <Layout title="Your projects" page={request.page} crumbs={[{ label: 'Dashboard', href: '/' }, { label: 'Projects' }]}>
        <div class="page-head">
          <h1>Your projects</h1>
          <a class="button" href="/projects/new">
            New project
          </a>
        </div>
        <SearchForm action="/dashboard/projects" label="Search your projects" value={search} />
        {found.rows.length > 0 ? (
          <ProjectList projects={found.rows} />
        ) : search ? (
          <p class="muted">No project matches your search.</p>
        ) : (
          <NoProjects />
        )}
        <Pager page={page} hasNext={page * PER_PAGE < found.total} href={(n) => `/dashboard/projects${query(search, n)}`} />
      </Layout>,
    );
  });

  web.get('/dashboard/groups', { schema: { querystring: ListQuery }, config: signedIn }, async (request, reply) => {
    const actor = request.page.actor!;
    const search = request.query.search?.trim() || undefined;
    const page = request.query.page ?? 1;
    const found = await myGroups(actor, search, PER_PAGE, (page - 1) * PER_PAGE);
    return sendPage(
      reply,
      <Layout title="Your groups" page={request.page} crumbs={[{ label: 'Dashboard', href: '/' }, { label: 'Groups' }]}>
        <h1>Your groups</h1>
        <SearchForm action="/dashboard/groups" label="Search your groups" value={search} />
        {found.rows.length > 0 ? (
          <GroupList groups={found.rows} />
        ) : search ? (
          <p class="muted">No group matches your search.</p>
        ) : (
          <NoGroups />
        )}
        <Pager page={page} hasNext={page * PER_PAGE < found.total} href={(n) => `/dashboard/groups${query(search, n)}`} />
      </Layout>,
    );
  });

  web.get('/dashboard/activity', { schema: { querystring: PageQuery }, config: signedIn }, async (request, reply) => {
    const actor = request.page.actor!;
    const page = request.query.page ?? 1;
    const activity = await myActivity(actor, PER_PAGE, (page - 1) * PER_PAGE);
    return sendPage(
      reply,
      <Layout title="Activity" page={request.page} crumbs={[{ label: 'Dashboard', href: '/' }, { label: 'Activity' }]}>
        <h1>Activity</h1>
        <p class="muted">What happens in your projects, newest first.</p>
        <ActivityList items={activity.items} empty={<NoActivity />} />
        <Pager page={page} hasNext={page * PER_PAGE < activity.total} href={(n) => `/dashboard/activity${n > 1 ? `?page=${n}` : ''}`} />
      </Layout>,
    );
  });
}

interface HomeSectionsProps {
  owned: { rows: readonly ProjectRow[]; total: number };
  groups: { rows: readonly NamespaceRow[]; total: number };
  activity: readonly ActivityItem[];
}

/** The dashboard's three sections: the person's projects, groups and recent activity. */
function HomeSections({ owned, groups, activity }: HomeSectionsProps) {
  return (
    <>
      <section aria-labelledby="your-projects">
        <h2 id="your-projects">
          <a href="/dashboard/projects">Your projects</a> <span class="badge">{owned.total}</span>
        </h2>
        {owned.rows.length === 0 ? <NoProjects /> : <ProjectList projects={owned.rows} />}
        {owned.total > SHOWN ? <a href="/dashboard/projects">All your projects</a> : null}
      </section>
      <section aria-labelledby="your-groups">
        <h2 id="your-groups">
          <a href="/dashboard/groups">Your groups</a> <span class="badge">{groups.total}</span>
        </h2>
        {groups.rows.length === 0 ? <NoGroups /> : <GroupList groups={groups.rows} />}
        {groups.total > SHOWN ? <a href="/dashboard/groups">All your groups</a> : null}
      </section>
      <section aria-labelledby="recent-activity">
        <h2 id="recent-activity">
          <a href="/dashboard/activity">Recent activity</a>
        </h2>
        <ActivityList items={activity} empty={<NoActivity />} />
      </section>
    </>
  );
}

function SearchForm({ action, label, value }: { action: string; label: string; value: string | undefined }) {
  return (
    <form method="get" action={action} class="search-form" role="search">
      <label for="search">{label}</label>
      <input id="search" type="search" name="search" value={value ?? ''} maxLength={255} />
      <button type="submit" class="secondary">
        Search
      </button>
    </form>
  );
}
