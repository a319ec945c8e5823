import { Type } from '@sinclair/typebox';
import { renderToString } from 'preact-render-to-string';
import type { FastifyRequest } from 'fastify';
import { AppError, MovedPermanentlyError, NotFoundError, UnauthorizedError } from '../../infra/errors/index.js';
import { prettyPageUrl } from '../../web/page-paths.js';
import { VersionCache } from '../../infra/db/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import { EmptyState, Layout, sendPage, type Crumb } from '../../web/index.js';
import type { UserRow } from '../identity/index.js';
import { AccessLevel } from './access.policy.js';
import type { NamespaceRow } from './namespaces.repository.js';
import type { GroupSettingsLink, ProjectPageExtensions, OverviewHint } from './page-extensions.service.js';
import type { ProjectsRouteDeps } from './projects.deps.js';
import type { ProjectRow } from './projects.repository.js';
import type { SnippetRow } from './snippets.repository.js';
import { groupCrumb, namespaceCrumbs } from './page-crumbs.service.js';
import { GroupList, Pager, ProjectList, VisibilityBadge, shortTime } from './projects.views.js';

export interface ProjectsPagesDeps extends ProjectsRouteDeps {
  extensions: ProjectPageExtensions;
}

const PER_PAGE = 20;
/** How long a computed overview may be shown while nothing is written (memberships expire with time alone). */
const OVERVIEW_TTL_MS = 10_000;
const PathParams = Type.Object({ path: Type.String({ minLength: 1, maxLength: 1024 }) });
const GroupParams = Type.Object({ group: Type.String({ minLength: 1, maxLength: 1024 }) });
const PageQuery = Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

/** What a visitor may not see may be there for someone signed in: sign in first, as the layer does. */
function signInFirst(request: FastifyRequest, error: unknown): never {
  const status = error instanceof AppError ? error.status : 0;
  const location = error instanceof AppError ? error.headers.location : undefined;
  if (status === 301 && location) throw new MovedPermanentlyError(prettyPageUrl(location));
  if (!request.page.actor && (status === 404 || status === 403)) throw new UnauthorizedError();
  throw error;
}

/**
 * `/<path>` (rewritten to `/-/n/:path`): a project's overview, a user's profile, or a group's
 * page at its own address; and `/groups/<full_path>` (`/-/g/:group`).
 */
export function projectsPages(web: ApiApp, deps: ProjectsPagesDeps): void {
  const { platform, users, access, lookup, groups, projects, members, issues, snippets, extensions } = deps;
  const cloneBase = platform.config.externalUrl;

  /** What a project's overview shows its viewer: the lookups and counts behind the page. */
  const overviewData = async (request: FastifyRequest, path: string) => {
    const found = await projects.findByRef(path);
    if (!found.row && !found.target) return null;
    // The API's own lookup: access, and a renamed project's 301 (to its new address).
    const { project, level } = await lookup.project(request, path);
    const actor = request.page.actor;
    const namespace = await projects.namespaceOf(project);
    const [open, hints, recent, crumbs] = await Promise.all([
      issues.list(
        project,
        {
          state: 'opened',
          orderBy: 'created_at',
          sort: 'desc',
          includeConfidential: level >= AccessLevel.REPORTER,
          viewerId: actor?.user.id ?? null,
        },
        1,
        0,
      ),
      extensions.overviewHints(project, level),
      snippets.list(
        {
          projectId: project.id,
          ...(level >= AccessLevel.GUEST ? {} : { visibilities: actor ? ['public', 'internal'] : ['public'] }),
        },
        5,
        0,
      ),
      namespaceCrumbs(deps, namespace, actor),
    ]);
    // Rendered here, from escaped values, so a kept overview is not rendered again.
    const html = renderToString(
      <ProjectOverview
        project={project}
        openIssues={open.total}
        cloneUrl={`${cloneBase}/${project.full_path}.git`}
        hints={hints}
        snippets={recent.rows}
      />,
    );
    return { project, level, crumbs, html };
  };
  type OverviewData = NonNullable<Awaited<ReturnType<typeof overviewData>>>;

  /**
   * A project's overview, rendered, kept until the next commit to the database (10 s at most), by
   * address and viewer: the page most often asked for, read far more often than it changes.
   * Refusals and redirects are thrown, so never kept.
   */
  const overviews = new VersionCache<OverviewData | null>({
    dataVersion: (scope) => platform.database.dataVersion(scope),
    clock: platform.clock,
    ttlMs: OVERVIEW_TTL_MS,
    maxEntries: 5000,
    maxBytes: 16 * 1024 * 1024,
  });
  const cachedOverview = (request: FastifyRequest, path: string) =>
    overviews.through(
      `${request.page.actor?.user.id ?? 0}\n${path}`,
      () => overviewData(request, path),
      (data) => (data === null ? 64 : data.html.length + JSON.stringify(data.project).length),
      request,
    );

  const overview = (request: FastifyRequest, { project, level, crumbs, html }: OverviewData) => (
    <Layout
      title={project.name}
      page={request.page}
      crumbs={[...crumbs, { label: project.name }]}
      project={{ fullPath: project.full_path, name: project.name, level, current: 'overview' }}
    >
      <div class="project-overview" dangerouslySetInnerHTML={{ __html: html }} />
    </Layout>
  );

  const profile = async (request: FastifyRequest, user: UserRow) => {
    const viewer = request.page.actor?.user ?? null;
    const readable = user.private_profile === 0 || (viewer !== null && (viewer.id === user.id || viewer.isAdmin));
    let owned: ProjectRow[] = [];
    if (readable) {
      const personal = await groups.personalNamespace(user.id);
      if (personal)
        owned = (
          await projects.list(request.page.actor, { namespaceIds: [personal.id], orderBy: 'last_activity_at', sort: 'desc' }, PER_PAGE, 0)
        ).rows;
    }
    return (
      <Layout title={`${user.name} (@${user.username})`} page={request.page} crumbs={[{ label: user.username }]}>
        <UserProfile user={user} readable={readable} projects={owned} />
      </Layout>
    );
  };

  web.get('/-/n/:path', { schema: { params: PathParams }, config: { page: { signIn: 'optional' } } }, async (request, reply) => {
    const { path } = request.params;
    const actor = request.page.actor;
    if (path.includes('/')) {
      const data = await cachedOverview(request, path).catch((error: unknown) => signInFirst(request, error));
      if (data) return sendPage(reply, overview(request, data));
    } else {
      const user = await users.findByUsername(path);
      if (user && (user.state !== 'blocked' || actor?.user.isAdmin)) return sendPage(reply, await profile(request, user));
    }
    // A group at its own address lives at `/groups/<full_path>`.
    const group = await groups.findByRef(path);
    const row = group.row ?? group.target;
    if (!row) return signInFirst(request, new NotFoundError('Page'));
    await access.checkGroup(actor, row).catch((error: unknown) => signInFirst(request, error));
    return reply.redirect(`/groups/${row.full_path}`, 301);
  });

  web.get(
    '/-/g/:group',
    { schema: { params: GroupParams, querystring: PageQuery }, config: { page: { signIn: 'optional', group: 0 } } },
    async (request, reply) => {
      const { row, level } = request.page.group!;
      const group = row as NamespaceRow;
      const actor = request.page.actor;
      const page = request.query.page ?? 1;
      const [subgroups, inGroup, memberCount, ancestry] = await Promise.all([
        groups.list({ scope: access.listScope(actor), parentId: group.id }, 100, 0),
        projects.list(actor, { namespaceIds: [group.id], orderBy: 'last_activity_at', sort: 'desc' }, PER_PAGE, (page - 1) * PER_PAGE),
        members.list('namespace', [group.id], 1, 0),
        groups.ancestry(group),
      ]);
      const crumbs: Crumb[] = await Promise.all(ancestry.map((g) => groupCrumb(access, g, actor)));
      return sendPage(
        reply,
        <Layout title={group.name} page={request.page} crumbs={crumbs}>
          <div class="page-head">
            <h1>
              {group.name} <VisibilityBadge visibility={group.visibility} />
            </h1>
            {level >= AccessLevel.DEVELOPER ? (
              <a class="button" href={`/projects/new?namespace_id=${group.id}`}>
                New project
              </a>
            ) : null}
          </div>
          <p class="muted">
            {group.full_path} · <span id="members-count">{memberCount.total}</span> member{memberCount.total === 1 ? '' : 's'}
          </p>
          {group.description ? <p>{group.description}</p> : null}
          <GroupSettingsNav links={extensions.groupSettingsLinks(group, level)} />
          {subgroups.rows.length > 0 ? (
            <section>
              <h2>Subgroups</h2>
              <GroupList groups={subgroups.rows} id="subgroups" />
            </section>
          ) : null}
          <section>
            <h2>Projects</h2>
            {inGroup.rows.length === 0 ? (
              level >= AccessLevel.DEVELOPER ? (
                <EmptyState
                  title="This group has no projects yet"
                  action={{ href: `/projects/new?namespace_id=${group.id}`, label: 'Create a project' }}
                >
                  Projects hold issues, snippets, alerts and errors.
                </EmptyState>
              ) : (
                <EmptyState title="No projects you can see">This group has no projects you have access to.</EmptyState>
              )
            ) : (
              <ProjectList projects={inGroup.rows} />
            )}
            <Pager
              page={page}
              hasNext={page * PER_PAGE < inGroup.total}
              href={(n) => `/groups/${group.full_path}${n > 1 ? `?page=${n}` : ''}`}
            />
          </section>
        </Layout>,
      );
    },
  );
}

/** The group settings pages the viewer may open (none: nothing is drawn). */
function GroupSettingsNav({ links }: { links: readonly GroupSettingsLink[] }) {
  if (links.length === 0) return null;
  return (
    <nav class="group-settings" aria-label="Group settings">
      <span class="muted">Settings:</span>{' '}
      {links.map((link, i) => (
        <>
          {i > 0 ? ' · ' : null}
          <a href={link.href}>{link.label}</a>
        </>
      ))}
    </nav>
  );
}

function ProjectOverview({
  project,
  openIssues,
  cloneUrl,
  hints,
  snippets,
}: {
  project: ProjectRow;
  openIssues: number;
  cloneUrl: string;
  hints: readonly OverviewHint[];
  snippets: readonly SnippetRow[];
}) {
  const base = `/${project.full_path}`;
  return (
    <>
      <div class="page-head">
        <h1>
          {project.name} <VisibilityBadge visibility={project.visibility} />
        </h1>
      </div>
      {project.description ? <p id="project-description">{project.description}</p> : <p class="muted">No description.</p>}
      <ul class="stats">
        <li>
          <a href={`${base}/-/issues`} id="open-issues">
            <strong>{openIssues}</strong> open issue{openIssues === 1 ? '' : 's'}
          </a>
        </li>
        <li>
          <a href={`${base}/-/activity`}>Recent activity</a>
        </li>
        <li class="muted">Last activity {shortTime(project.last_activity_at)}</li>
      </ul>
      <div class="field">
        <label for="clone-url">Clone with HTTPS</label>
        <input id="clone-url" type="text" readonly value={cloneUrl} />
      </div>
      {snippets.length > 0 ? (
        <section>
          <h2>Snippets</h2>
          <ul class="item-list" id="snippets">
            {snippets.map((snippet) => (
              <li key={snippet.id}>
                <a href={`${base}/-/snippets/${snippet.id}`}>{snippet.title}</a> <span class="muted">{snippet.file_name}</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {hints.map((hint) => (
        <EmptyState key={hint.title} title={hint.title} action={hint.action}>
          {hint.text}
        </EmptyState>
      ))}
    </>
  );
}

function UserProfile({ user, readable, projects }: { user: UserRow; readable: boolean; projects: readonly ProjectRow[] }) {
  return (
    <>
      <h1>{user.name}</h1>
      <p class="muted">@{user.username}</p>
      {user.state === 'blocked' ? <p class="badge">Blocked</p> : null}
      {readable ? (
        <>
          {user.bio ? <p id="bio">{user.bio}</p> : null}
          <h2>Projects</h2>
          {projects.length === 0 ? <p class="muted">No projects to show.</p> : <ProjectList projects={projects} />}
        </>
      ) : (
        <p class="muted" id="private-profile">
          This user has a private profile.
        </p>
      )}
    </>
  );
}
