import type { Clock } from '../../infra/clock.js';
import type { Executor } from '../../infra/db/index.js';
import type { GroupsService, ProjectsService, SnippetsService } from '../projects/index.js';
import type { GitRepository, MoveContainerKind } from './git.repository.js';
import type { RepositoryKind } from './git.storage.js';

/** One repository of a container: what `RepositoryStorages` needs to find it. */
export interface RepositoryRef {
  readonly kind: RepositoryKind;
  readonly id: number;
  /** Name used in messages ("project", "wiki", "snippet", "group wiki"). */
  readonly label: string;
}

/** A project, snippet or group, seen as the owner of repositories on one storage. */
export interface Container {
  readonly kind: MoveContainerKind;
  readonly id: number;
  readonly storage: string;
  readonly readOnly: boolean;
  readonly defaultBranch: string;
  readonly repositories: readonly RepositoryRef[];
}

/**
 * The storage and read-only flag of each kind of container live with the container
 * (projects and snippets in the projects module, group wikis in this module's table);
 * this is the one place that knows which.
 */
export class Containers {
  constructor(
    private readonly projects: ProjectsService,
    private readonly snippets: SnippetsService,
    private readonly groups: GroupsService,
    private readonly git: GitRepository,
    private readonly clock: Clock,
    private readonly defaultStorage: string,
  ) {}

  async find(kind: MoveContainerKind, id: number): Promise<Container | null> {
    switch (kind) {
      case 'project': {
        const project = await this.projects.findByIdIncludingDeleted(id);
        if (!project) return null;
        return {
          kind,
          id,
          storage: project.repository_storage,
          readOnly: project.repository_read_only === 1,
          defaultBranch: project.default_branch,
          repositories: [
            { kind: 'project', id, label: 'project' },
            { kind: 'wiki', id, label: 'wiki' },
          ],
        };
      }
      case 'snippet': {
        const snippet = await this.snippets.findById(id);
        if (!snippet) return null;
        return {
          kind,
          id,
          storage: snippet.repository_storage,
          readOnly: snippet.repository_read_only === 1,
          defaultBranch: 'main',
          repositories: [{ kind: 'snippet', id, label: 'snippet' }],
        };
      }
      case 'group': {
        const group = await this.groups.findByIdIncludingDeleted(id);
        if (group?.kind !== 'group') return null;
        const wiki = (await this.git.findGroupWiki(id)) ?? (await this.git.insertGroupWiki(id, this.defaultStorage, this.clock.now()));
        return {
          kind,
          id,
          storage: wiki.repository_storage,
          readOnly: wiki.repository_read_only === 1,
          defaultBranch: 'main',
          repositories: [{ kind: 'group_wiki', id, label: 'group wiki' }],
        };
      }
    }
  }

  /** `executor`: the caller's transaction, when the flag must change together with a move's state. */
  async setReadOnly(kind: MoveContainerKind, id: number, readOnly: boolean, executor?: Executor): Promise<void> {
    if (kind === 'project') await this.projects.setReadOnly(id, readOnly, executor);
    else if (kind === 'snippet') await this.snippets.setReadOnly(id, readOnly, executor);
    else await this.gitWith(executor).updateGroupWiki(id, { repository_read_only: readOnly ? 1 : 0 }, this.clock.now());
  }

  /** Points the container at another storage; only called during a move, so it stays read-only. */
  async setStorage(kind: MoveContainerKind, id: number, storage: string, executor?: Executor): Promise<void> {
    if (kind === 'project') await this.projects.setStorage(id, storage, true, executor);
    else if (kind === 'snippet') await this.snippets.setStorage(id, storage, executor);
    else await this.gitWith(executor).updateGroupWiki(id, { repository_storage: storage }, this.clock.now());
  }

  private gitWith(executor: Executor | undefined): GitRepository {
    return executor ? this.git.on(executor) : this.git;
  }
}
