import type { Actor } from '../../infra/auth/index.js';
import {
  AccessLevel,
  type AccessPolicy,
  type GroupsService,
  type ProjectRow,
  type ProjectsService,
  type SnippetsService,
} from '../projects/index.js';
import type { Container, Containers, RepositoryRef } from './containers.service.js';

export interface TargetAccess {
  /** The caller may know it exists. */
  visible: boolean;
  read: boolean;
  write: boolean;
}

/** The repository a git URL names, found through the database (never through the filesystem). */
export interface GitTarget {
  container: Container;
  repository: RepositoryRef;
  /** Set for a project's main repository: pushes there become push events. */
  projectId: number | null;
  access(actor: Actor | null): Promise<TargetAccess>;
}

export interface TargetDeps {
  projects: ProjectsService;
  snippets: SnippetsService;
  groups: GroupsService;
  access: AccessPolicy;
  containers: Containers;
}

const SNIPPET = /^(?:(.+?)\/(?:-\/)?)?snippets\/(\d{1,12})$/;

/**
 * `<project>`, `<project>.wiki`, `<group>.wiki`, `snippets/<id>` and
 * `<project>/snippets/<id>` (also `<project>/-/snippets/<id>`), each without `.git`.
 * A project whose own path matches wins over the other readings.
 */
export async function resolveTarget(repoPath: string, deps: TargetDeps): Promise<GitTarget | null> {
  const project = await findProject(repoPath, deps);
  if (project) return projectTarget(project, 'project', deps);

  const snippet = SNIPPET.exec(repoPath);
  if (snippet?.[2]) return snippetTarget(snippet[1] ?? null, Number(snippet[2]), deps);

  if (repoPath.endsWith('.wiki')) {
    const base = repoPath.slice(0, -'.wiki'.length);
    const wikiProject = await findProject(base, deps);
    if (wikiProject) return projectTarget(wikiProject, 'wiki', deps);
    if (!/^\d+$/.test(base)) {
      const found = await deps.groups.findByRef(base);
      const group = found.row ?? (found.movedTo ? (await deps.groups.findByRef(found.movedTo)).row : undefined);
      if (group) {
        const container = await deps.containers.find('group', group.id);
        if (!container?.repositories[0]) return null;
        return {
          container,
          repository: container.repositories[0],
          projectId: null,
          access: async (actor) => {
            const level = await deps.access.namespaceLevel(actor, group);
            return levelAccess(deps, actor, group.visibility, level);
          },
        };
      }
    }
  }
  return null;
}

/** By full path, following a renamed project's old path to where it went. */
async function findProject(path: string, deps: TargetDeps): Promise<ProjectRow | undefined> {
  if (!path.includes('/')) return undefined;
  const found = await deps.projects.findByRef(path);
  if (found.row) return found.row;
  return found.movedTo ? deps.projects.findByFullPath(found.movedTo) : undefined;
}

function levelAccess(deps: TargetDeps, actor: Actor | null, visibility: string, level: number): TargetAccess {
  const visible = deps.access.canSee(actor, visibility, level);
  // Anyone who sees a public or internal repository may clone it; private ones need Reporter.
  const read = visible && (visibility !== 'private' || level >= AccessLevel.REPORTER);
  return { visible, read, write: actor !== null && level >= AccessLevel.DEVELOPER };
}

async function projectTarget(project: ProjectRow, kind: 'project' | 'wiki', deps: TargetDeps): Promise<GitTarget | null> {
  const container = await deps.containers.find('project', project.id);
  const repository = container?.repositories.find((r) => r.kind === kind);
  if (!container || !repository) return null;
  return {
    container,
    repository,
    projectId: kind === 'project' ? project.id : null,
    access: async (actor) => levelAccess(deps, actor, project.visibility, await deps.access.projectLevel(actor, project)),
  };
}

async function snippetTarget(projectPath: string | null, id: number, deps: TargetDeps): Promise<GitTarget | null> {
  const snippet = await deps.snippets.findById(id);
  if (!snippet) return null;
  const project = projectPath ? await findProject(projectPath, deps) : undefined;
  // A project snippet answers only under its project, a personal one only under /snippets.
  if (projectPath ? snippet.project_id !== project?.id : snippet.project_id !== null) return null;
  const container = await deps.containers.find('snippet', id);
  if (!container?.repositories[0]) return null;
  return {
    container,
    repository: container.repositories[0],
    projectId: null,
    access: async (actor) => {
      const projectLevel = async (projectId: number) => {
        const row = await deps.projects.findById(projectId);
        if (!row) return { level: 0, visible: false };
        const level = await deps.access.projectLevel(actor, row);
        return { level, visible: deps.access.canSee(actor, row.visibility, level) };
      };
      const visible = await deps.snippets.canSee(actor, snippet, projectLevel);
      const level = snippet.project_id !== null ? (await projectLevel(snippet.project_id)).level : 0;
      // Pushing changes the snippet: the same rule as changing it through the API.
      return { visible, read: visible, write: visible && actor !== null && deps.snippets.canModify(actor, snippet, level) };
    },
  };
}
