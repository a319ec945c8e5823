import type { Platform } from '../../infra/platform.js';
import type { UsersService } from '../identity/index.js';
import type { SnippetsService } from '../projects/index.js';
import type { Containers } from './containers.service.js';
import type { GitRepository, MoveContainerKind } from './git.repository.js';
import { commitInitialFile, type RepositoryKind, type RepositoryStorages } from './git.storage.js';

export const CREATE_REPOSITORIES_JOB = 'git.create_repositories';
export const REMOVE_REPOSITORIES_JOB = 'git.remove_repositories';

interface RemovalPayload {
  repositories: { storage: string; kind: RepositoryKind; id: number }[];
}

/**
 * Repositories follow their containers: created when a project, snippet or group is
 * created, removed when it is removed. Both happen in jobs enqueued inside the creating or
 * removing transaction, so they run only after that commits (and again after a crash).
 */
export function registerRepositoryLifecycle(
  platform: Platform,
  deps: { storages: RepositoryStorages; containers: Containers; git: GitRepository; snippets: SnippetsService; users: UsersService },
): { createRepositories(kind: MoveContainerKind, id: number): Promise<void> } {
  const { bus, jobs } = platform;
  const { storages, containers, git } = deps;
  const defaultStorage = storages.names()[0] ?? 'default';

  // Only container creation and removal matter here.
  bus.subscribe(['project_created', 'snippet_created', 'group_created', 'project_removing', 'group_removing'], async (event, executor) => {
    switch (event.type) {
      case 'project_created':
        await jobs.enqueue(executor, CREATE_REPOSITORIES_JOB, { kind: 'project', id: event.projectId });
        return;
      case 'snippet_created':
        await jobs.enqueue(executor, CREATE_REPOSITORIES_JOB, { kind: 'snippet', id: event.snippetId });
        return;
      case 'group_created':
        await git.on(executor).insertGroupWiki(event.namespaceId, defaultStorage, event.at);
        await jobs.enqueue(executor, CREATE_REPOSITORIES_JOB, { kind: 'group', id: event.namespaceId });
        return;
      case 'project_removing': {
        const payload: RemovalPayload = {
          repositories: [
            { storage: event.storage, kind: 'project', id: event.projectId },
            { storage: event.storage, kind: 'wiki', id: event.projectId },
          ],
        };
        await jobs.enqueue(executor, REMOVE_REPOSITORIES_JOB, payload);
        return;
      }
      case 'group_removing': {
        const scoped = git.on(executor);
        const wiki = await scoped.findGroupWiki(event.namespaceId);
        if (!wiki) return;
        await scoped.deleteGroupWiki(event.namespaceId);
        const payload: RemovalPayload = {
          repositories: [{ storage: wiki.repository_storage, kind: 'group_wiki', id: event.namespaceId }],
        };
        await jobs.enqueue(executor, REMOVE_REPOSITORIES_JOB, payload);
        return;
      }
    }
  });

  const createRepositories = async (kind: MoveContainerKind, id: number) => {
    const container = await containers.find(kind, id);
    if (!container) return;
    for (const repository of container.repositories) {
      const repo = await storages.ensure(container.storage, repository.kind, repository.id, container.defaultBranch);
      if (repository.kind === 'snippet') await writeSnippetContent(repo, id, deps);
    }
  };

  jobs.register(CREATE_REPOSITORIES_JOB, async (payload) => {
    const { kind, id } = payload as { kind: MoveContainerKind; id: number };
    await createRepositories(kind, id);
  });

  jobs.register(REMOVE_REPOSITORIES_JOB, async (payload, context) => {
    for (const repository of (payload as RemovalPayload).repositories) {
      await storages.remove(repository.storage, repository.kind, repository.id);
      context.log.info({ storage: repository.storage, kind: repository.kind, id: repository.id }, 'repository removed');
    }
  });

  return { createRepositories };
}

/** A snippet's repository holds its file as the first commit, as the established product's do. */
async function writeSnippetContent(repo: string, snippetId: number, deps: { snippets: SnippetsService; users: UsersService }) {
  const snippet = await deps.snippets.findById(snippetId);
  if (!snippet) return;
  const author = await deps.users.findById(snippet.author_id);
  await commitInitialFile(repo, {
    branch: 'main',
    fileName: snippet.file_name,
    content: snippet.content,
    authorName: author?.name ?? 'Basalt',
    authorEmail: author?.email ?? 'noreply@basalt.invalid',
    message: snippet.title.split('\n')[0] ?? 'Snippet',
    at: snippet.created_at,
  });
}
