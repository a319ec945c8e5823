import type { ModuleRoutes, Platform } from '../../infra/platform.js';
import { Containers } from './containers.service.js';
import type { GitModuleDeps } from './git.deps.js';
import { registerRepositoryLifecycle } from './git.lifecycle.js';
import { GitRepository } from './git.repository.js';
import { gitProcesses } from './git.exec.js';
import { RepositoryStorages } from './git.storage.js';
import { MovePresenter } from './moves.presenter.js';
import { movesRoutes } from './moves.routes.js';
import { BULK_MOVE_JOB, MOVE_JOB, MovesService } from './moves.service.js';
import { MoveWorker } from './moves.worker.js';
import { GitAuthenticator } from './smart-http.auth.js';
import { smartHttpRoutes } from './smart-http.routes.js';

export type { GitModuleDeps } from './git.deps.js';
export { RepositoryStorages, relativeRepositoryPath, type RepositoryKind } from './git.storage.js';
export { copyRepository, timeRepositoryMove, refListing, refListingFromFiles, objectChecksum } from './repository-copy.exec.js';
export type { MoveRow, MoveContainerKind, MoveState } from './git.repository.js';
export { MOVE_JOB, BULK_MOVE_JOB } from './moves.service.js';
export type { MovesService } from './moves.service.js';
export type { Containers, Container } from './containers.service.js';

/** Storage moves under `/api/v4`; git smart HTTP at the root. */
export interface GitModule extends ModuleRoutes {
  readonly storages: RepositoryStorages;
  readonly containers: Containers;
  readonly moves: MovesService;
  readonly worker: MoveWorker;
  /** Creates the repositories of a container now (the creation job does the same). */
  createRepositories(kind: 'project' | 'snippet' | 'group', id: number): Promise<void>;
}

export function createGitModule(platform: Platform, deps: GitModuleDeps): GitModule {
  const { identity, projects } = deps;
  const { config, db, jobs, clock } = platform;
  const storages = new RepositoryStorages(config.storages);
  const git = new GitRepository(db);
  const containers = new Containers(projects.projects, projects.snippets, projects.groups, git, clock, storages.names()[0] ?? 'default');
  const lifecycle = registerRepositoryLifecycle(platform, {
    storages,
    containers,
    git,
    snippets: projects.snippets,
    users: identity.users,
  });
  const moves = new MovesService(platform, containers, storages, git, projects.projects, projects.snippets);
  const worker = new MoveWorker(platform, containers, storages, git);
  const presenter = new MovePresenter(config.externalUrl, projects.projects, projects.snippets, projects.groups, identity.users);

  jobs.register(MOVE_JOB, async (payload, context) => {
    await worker.run((payload as { moveId: number }).moveId, context);
  });
  jobs.register(BULK_MOVE_JOB, async (payload, context) => {
    const { kind, source, destination } = payload as { kind: 'project' | 'snippet' | 'group'; source: string; destination: string | null };
    const count = await moves.runBulk(kind, source, destination, (message) => context.log.warn(message));
    context.log.info({ kind, source, destination, scheduled: count }, 'bulk storage moves scheduled');
  });

  platform.metrics.gauge({
    name: 'basalt_storage_moves',
    help: 'Repository storage moves by state',
    labelNames: ['state'],
    aggregator: 'max',
    read: async () => (await git.moveCountsByState()).map((row) => ({ labels: { state: row.state }, value: row.n })),
  });
  platform.metrics.gauge({
    name: 'basalt_git_processes_running',
    help: 'git processes (commands and http-backend) running in this process',
    labelNames: [],
    aggregator: 'sum',
    read: () => [{ labels: {}, value: gitProcesses.running }],
  });

  const authenticator = new GitAuthenticator(platform, identity.users);
  return {
    storages,
    containers,
    moves,
    worker,
    createRepositories: (kind, id) => lifecycle.createRepositories(kind, id),
    routes: (app) => movesRoutes(app, { platform, moves, presenter, lookup: projects.lookup, snippets: projects.snippets }),
    rootRoutes: async (app) =>
      smartHttpRoutes(app, {
        platform,
        storages,
        git,
        authenticator,
        projects: projects.projects,
        snippets: projects.snippets,
        groups: projects.groups,
        access: projects.access,
        containers,
      }),
  };
}
