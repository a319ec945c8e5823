import { noRootRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import { toActorUser } from '../identity/index.js';
import { AccessPolicy } from './access.policy.js';
import { groupsRoutes } from './groups.routes.js';
import { GroupsService } from './groups.service.js';
import { issuesRoutes } from './issues.routes.js';
import { IssuesService } from './issues.service.js';
import { membersRoutes } from './members.routes.js';
import { MembersService } from './members.service.js';
import { IssuesRepository } from './issues.repository.js';
import { JobsRepository } from './jobs.repository.js';
import { MembersRepository } from './members.repository.js';
import { NamespacesRepository } from './namespaces.repository.js';
import { ProjectsRepository } from './projects.repository.js';
import { SnippetsRepository } from './snippets.repository.js';
import { ProjectLookup } from './projects.lookup.js';
import { ProjectTrails } from './page-crumbs.service.js';
import { ProjectPageExtensions } from './page-extensions.service.js';
import { projectsPages } from './projects.pages.js';
import { issuesPages } from './issues.pages.js';
import { snippetsPages } from './snippets.pages.js';
import { projectsRoutes } from './projects.routes.js';
import { ProjectsService } from './projects.service.js';
import { registerRemovalJobs } from './removal.jobs.js';
import type { ProjectsModuleDeps, ProjectsRouteDeps } from './projects.deps.js';
import { snippetsRoutes } from './snippets.routes.js';
import { jobsRoutes } from './jobs.routes.js';
import { JobsService } from './jobs.service.js';
import { SnippetsService } from './snippets.service.js';
import { PROJECTS_EPOCH_TABLES } from './projects.epochs.js';

export { AccessLevel, AccessPolicy, MEMBER_LEVELS } from './access.policy.js';
export type { ProjectsModuleDeps } from './projects.deps.js';
export type { ProjectRow } from './projects.repository.js';
export type { NamespaceRow } from './namespaces.repository.js';
export type { IssueRow, NoteRow } from './issues.repository.js';
export type { SnippetRow } from './snippets.repository.js';
export type { MemberRow } from './members.repository.js';
export { ProjectLookup } from './projects.lookup.js';
export type { ProjectsService } from './projects.service.js';
export type { GroupsService } from './groups.service.js';
export type { IssuesService } from './issues.service.js';
export { parseDay } from './issues.service.js';
export type { MembersService } from './members.service.js';
export type { SnippetsService } from './snippets.service.js';
export type { JobsService } from './jobs.service.js';
export { mapIssue, mapNote, mapProject, mapGroup } from './projects.presenter.js';
export type { ProjectPageExtensions, IssueOrigin, OverviewHint, GroupSettingsLink } from './page-extensions.service.js';
export { namespaceCrumbs, ProjectTrails } from './page-crumbs.service.js';
export { GroupList, Pager, ProjectList, VisibilityBadge, shortTime } from './projects.views.js';
/** Response entities, for other modules' routes that answer with them. */
export { Project, ProjectIdentity, Group, UserBasic } from './entities.schemas.js';
export { BasicSnippet } from './snippets.schemas.js';
export { Issue, Note } from './issues.schemas.js';

/** Groups, projects, members, issues, snippets and CI jobs under `/api/v4`; nothing at the root. */
export interface ProjectsModule extends ModuleRoutes {
  readonly access: AccessPolicy;
  readonly lookup: ProjectLookup;
  readonly groups: GroupsService;
  readonly projects: ProjectsService;
  readonly members: MembersService;
  readonly issues: IssuesService;
  readonly snippets: SnippetsService;
  /** CI jobs and their job tokens. */
  readonly ciJobs: JobsService;
  /** What other modules add to the project pages (an issue's origin, a setup hint). */
  readonly pageExtensions: ProjectPageExtensions;
  /** The trail above a project's pages for a viewer, kept until the next commit. */
  readonly trails: ProjectTrails;
}

export function createProjectsModule(platform: Platform, moduleDeps: ProjectsModuleDeps): ProjectsModule {
  // Writes to these tables bump the epoch wherever they are made (infra/db/epoch-bumps.ts).
  platform.database.epochs.declare('projects', PROJECTS_EPOCH_TABLES);
  const { identity, spam } = moduleDeps;
  const { db, clock, bus, jobs, config } = platform;
  const storages = Object.keys(config.storages);
  const rows = {
    namespaces: new NamespacesRepository(db),
    projects: new ProjectsRepository(db),
    members: new MembersRepository(db),
  };
  const access = new AccessPolicy(rows.namespaces, rows.members, clock);
  const groups = new GroupsService(db, rows.namespaces, rows.members, rows.projects, clock, access, jobs, bus);
  const projects = new ProjectsService(db, rows.projects, rows.namespaces, clock, bus, access, jobs, storages);
  const members = new MembersService(db, rows.members, clock, bus);
  const issues = new IssuesService(db, new IssuesRepository(db), rows.projects, clock, bus, spam, {
    multipleAssignees: config.tier !== 'free',
    // The established product's rule: an assignee must be able to read the project's issues.
    readable: async (project, userIds) => {
      const users = await identity.users.mapByIds(userIds);
      const out: number[] = [];
      for (const id of userIds) {
        const user = users.get(id);
        if (!user || user.state !== 'active') continue;
        const actor = { user: toActorUser(user), credential: { kind: 'session' as const, id: 0, scopes: null } };
        if (access.canSee(actor, project.visibility, await access.projectLevel(actor, project))) out.push(id);
      }
      return out;
    },
  });
  const snippets = new SnippetsService(db, new SnippetsRepository(db), clock, bus, storages[0] ?? 'default', spam);
  const ciJobs = new JobsService(new JobsRepository(db), clock);
  // Job tokens are resolved here (DESIGN.md §2): the hook asks only on allow-listed routes.
  platform.resolvers.register({ jobToken: (secret) => ciJobs.resolve(secret) });
  const lookup = new ProjectLookup(projects, groups, access, config.externalUrl);

  // Every user owns a personal namespace named after them, created in the same transaction.
  bus.subscribe(['user_created'], async (event, executor) => {
    await rows.namespaces.on(executor).insert({
      kind: 'user',
      name: event.name,
      path: event.username,
      fullPath: event.username,
      parentId: null,
      ownerId: event.userId,
      visibility: 'public',
      description: '',
      now: event.at,
    });
  });
  registerRemovalJobs(db, rows, jobs, bus, clock);

  const deps: ProjectsRouteDeps = { platform, users: identity.users, access, lookup, groups, projects, members, issues, snippets };
  const pageExtensions = new ProjectPageExtensions();
  const trails = new ProjectTrails({ groups, access, projects }, platform);
  return {
    access,
    lookup,
    groups,
    projects,
    members,
    issues,
    snippets,
    ciJobs,
    pageExtensions,
    trails,
    routes: (app) => {
      groupsRoutes(app, deps);
      projectsRoutes(app, deps);
      membersRoutes(app, deps);
      issuesRoutes(app, deps);
      snippetsRoutes(app, deps);
      jobsRoutes(app, { ...deps, jobs: ciJobs });
    },
    rootRoutes: noRootRoutes,
    pages: (web) => {
      const pageDeps = { ...deps, extensions: pageExtensions };
      projectsPages(web, pageDeps);
      issuesPages(web, pageDeps);
      snippetsPages(web, pageDeps);
    },
  };
}
