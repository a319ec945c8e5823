import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { git } from './git.exec.js';

/** What a repository belongs to; each kind has its own hashed folder so ids never collide. */
export type RepositoryKind = 'project' | 'wiki' | 'snippet' | 'group_wiki';

const PREFIX: Record<RepositoryKind, string> = { project: '@hashed', wiki: '@hashed', snippet: '@snippets', group_wiki: '@groups' };

/**
 * `@hashed/ab/cd/<sha256(id)>.git` (wikis `.wiki.git`): the path depends only on the id, so
 * renaming a project or group never moves files, and no URL text ever reaches the filesystem.
 */
export function relativeRepositoryPath(kind: RepositoryKind, id: number): string {
  const hash = createHash('sha256').update(String(id)).digest('hex');
  const suffix = kind === 'wiki' || kind === 'group_wiki' ? '.wiki.git' : '.git';
  return `${PREFIX[kind]}/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}${suffix}`;
}

export class UnknownStorageError extends Error {
  constructor(readonly storage: string) {
    super(`unknown repository storage "${storage}"`);
  }
}

async function exists(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch {
    return false;
  }
}

/** The configured storages (name -> directory) and the bare repositories inside them. */
export class RepositoryStorages {
  constructor(private readonly storages: Readonly<Record<string, string>>) {}

  names(): string[] {
    return Object.keys(this.storages);
  }

  has(name: string): boolean {
    return Object.hasOwn(this.storages, name);
  }

  dir(name: string): string {
    const dir = this.has(name) ? this.storages[name] : undefined;
    if (!dir) throw new UnknownStorageError(name);
    return dir;
  }

  path(storage: string, kind: RepositoryKind, id: number): string {
    return path.join(this.dir(storage), relativeRepositoryPath(kind, id));
  }

  /**
   * The repository's directory when it exists and really lies inside its storage (a symlink
   * pointing elsewhere is refused); `null` when it does not exist.
   */
  async resolve(storage: string, kind: RepositoryKind, id: number): Promise<string | null> {
    const repo = this.path(storage, kind, id);
    if (!(await exists(repo))) return null;
    const [realRepo, realStorage] = await Promise.all([realpath(repo), realpath(this.dir(storage))]);
    if (!realRepo.startsWith(realStorage + path.sep)) throw new Error(`repository ${repo} resolves outside its storage`);
    if (!(await stat(realRepo)).isDirectory()) throw new Error(`repository ${repo} is not a directory`);
    return realRepo;
  }

  /** Creates an empty bare repository unless one is there (safe to call again, and concurrently). */
  async ensure(storage: string, kind: RepositoryKind, id: number, defaultBranch = 'main'): Promise<string> {
    const found = await this.resolve(storage, kind, id);
    if (found) return found;
    const repo = this.path(storage, kind, id);
    await mkdir(path.dirname(repo), { recursive: true });
    const tmp = `${repo}.init-${randomBytes(4).toString('hex')}`;
    const branch = /^[A-Za-z0-9._/-]{1,200}$/.test(defaultBranch) ? defaultBranch : 'main';
    await git(['init', '--bare', '--quiet', `--initial-branch=${branch}`, tmp]);
    try {
      await rename(tmp, repo);
    } catch (error) {
      await rm(tmp, { recursive: true, force: true });
      // Another process created it first: theirs is as good as ours.
      if (!(await exists(repo))) throw error;
    }
    return (await this.resolve(storage, kind, id)) ?? repo;
  }

  /** Renames the repository out of the way at once, then deletes it. */
  async remove(storage: string, kind: RepositoryKind, id: number): Promise<void> {
    if (!this.has(storage)) return;
    const repo = this.path(storage, kind, id);
    if (!(await exists(repo))) return;
    const trash = `${repo}+${Date.now()}+${randomBytes(3).toString('hex')}+deleted`;
    await rename(repo, trash);
    await rm(trash, { recursive: true, force: true });
  }
}

/**
 * Writes one file as the first commit of an empty bare repository (a snippet's content);
 * nothing happens when the branch already has a commit.
 */
export async function commitInitialFile(
  repo: string,
  input: { branch: string; fileName: string; content: string; authorName: string; authorEmail: string; message: string; at: number },
): Promise<void> {
  const ref = `refs/heads/${input.branch}`;
  const current = await git(['rev-parse', '--verify', '--quiet', ref], { cwd: repo }).catch(() => '');
  if (current.trim() !== '') return;
  const blob = (await git(['hash-object', '-w', '--stdin'], { cwd: repo, input: input.content })).trim();
  const name = path.basename(input.fileName).replace(/[\t\n\0]/g, '_') || 'snippet.txt';
  const tree = (await git(['mktree'], { cwd: repo, input: `100644 blob ${blob}\t${name}\n` })).trim();
  const date = `${Math.floor(input.at / 1000)} +0000`;
  const identity = {
    GIT_AUTHOR_NAME: input.authorName,
    GIT_AUTHOR_EMAIL: input.authorEmail,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: input.authorName,
    GIT_COMMITTER_EMAIL: input.authorEmail,
    GIT_COMMITTER_DATE: date,
  };
  const commit = (await git(['commit-tree', tree, '-m', input.message], { cwd: repo, env: identity })).trim();
  // The empty old value makes the update fail if someone else wrote the branch meanwhile.
  await git(['update-ref', ref, commit, ''], { cwd: repo });
}
