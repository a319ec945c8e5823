import { projectAudit } from '../../infra/audit.js';
import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { isUniqueViolation, type Database, type Executor } from '../../infra/db/index.js';
import { ConflictError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { idOf, isNumericRef } from '../../infra/refs.js';
import type { JobQueue } from '../../infra/jobs/index.js';
import { AccessLevel, type AccessPolicy } from './access.policy.js';
import { resolveRedirect, type Found } from './groups.service.js';
import type { NamespacesRepository, NamespaceRow } from './namespaces.repository.js';
import { checkNameAndPath, checkVisibilityWithin, pathFromName } from './paths.rules.js';
import type { ProjectsRepository, ProjectFilter, ProjectRow } from './projects.repository.js';

export interface CreateProjectInput {
  name?: string | undefined;
  path?: string | undefined;
  namespace_id?: number | undefined;
  visibility?: string | undefined;
  description?: string | undefined;
  default_branch?: string | undefined;
}

export interface UpdateProjectInput {
  name?: string | undefined;
  path?: string | undefined;
  visibility?: string | undefined;
  description?: string | undefined;
  default_branch?: string | undefined;
}

export const PROJECT_REMOVAL_JOB = 'projects.remove';

export class ProjectsService {
  constructor(
    private readonly db: Database,
    private readonly projects: ProjectsRepository,
    private readonly namespaces: NamespacesRepository,
    private readonly clock: Clock,
    private readonly bus: DomainEventBus,
    private readonly access: AccessPolicy,
    private readonly jobs: JobQueue,
    private readonly storages: readonly string[],
  ) {}

  /** By id or full path; a renamed project's (or group's) old path answers with where it went. */
  async findByRef(ref: string): Promise<Found<ProjectRow>> {
    if (isNumericRef(ref)) {
      const id = idOf(ref);
      const row = id === null ? undefined : await this.projects.findById(id);
      return row ? { row } : {};
    }
    if (!ref.includes('/')) return {};
    const row = await this.projects.findByFullPath(ref);
    if (row) return { row };
    const redirect = await resolveRedirect(this.namespaces, ref);
    const target =
      redirect?.kind === 'project'
        ? await this.projects.findById(redirect.id)
        : redirect
          ? await this.projects.findByFullPath(redirect.path)
          : undefined;
    return target ? { movedTo: target.full_path, target } : {};
  }

  /** By id; other modules pass their transaction when they read inside one (a bus subscriber). */
  findById(id: number, executor?: Executor): Promise<ProjectRow | undefined> {
    return (executor ? this.projects.on(executor) : this.projects).findById(id);
  }

  /** The project's namespace and its ancestors, root first, read with the caller's executor when given. */
  ancestry(project: ProjectRow, executor?: Executor): Promise<NamespaceRow[]> {
    const namespacePath = project.full_path.slice(0, project.full_path.lastIndexOf('/'));
    return (executor ? this.namespaces.on(executor) : this.namespaces).ancestry(namespacePath);
  }

  findByIdIncludingDeleted(id: number): Promise<ProjectRow | undefined> {
    return this.projects.findByIdIncludingDeleted(id);
  }

  findByFullPath(fullPath: string): Promise<ProjectRow | undefined> {
    return this.projects.findByFullPath(fullPath);
  }

  /** The next per-project number for `usage` (alerts, ...) inside the caller's transaction. */
  nextInternalId(projectId: number, usage: string, executor: Executor): Promise<number> {
    return this.projects.on(executor).nextInternalId(projectId, usage);
  }

  namespaceOf(project: ProjectRow): Promise<NamespaceRow | undefined> {
    return this.namespaces.findByIdIncludingDeleted(project.namespace_id);
  }

  async create(actor: Actor, input: CreateProjectInput): Promise<ProjectRow> {
    const name = input.name ?? input.path;
    if (name === undefined) throw ValidationError.field('name', "can't be blank");
    const path = input.path ?? pathFromName(name);
    checkNameAndPath(name, path, false);
    const namespace =
      input.namespace_id !== undefined
        ? await this.namespaces.findById(input.namespace_id)
        : await this.namespaces.findPersonal(actor.user.id);
    if (!namespace) throw new NotFoundError('Namespace');
    if (namespace.kind === 'group') await this.access.checkGroup(actor, namespace, AccessLevel.DEVELOPER);
    else if (namespace.owner_id !== actor.user.id && !actor.user.isAdmin) throw new NotFoundError('Namespace');
    const visibility = input.visibility ?? 'private';
    if (namespace.kind === 'group') checkVisibilityWithin(visibility, namespace.visibility);
    const fullPath = `${namespace.full_path}/${path}`;
    const now = this.clock.now();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const projects = this.projects.on(trx);
        await this.namespaces.on(trx).dropRedirect(fullPath);
        const project = await projects.insert({
          namespaceId: namespace.id,
          name,
          path,
          fullPath,
          description: input.description ?? '',
          visibility,
          repositoryStorage: this.pickStorage(),
          defaultBranch: input.default_branch ?? 'main',
          creatorId: actor.user.id,
          now,
        });
        await this.bus.publish({ type: 'project_created', projectId: project.id, authorId: actor.user.id, at: now }, trx);
        return project;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('Project path has already been taken');
      throw error;
    }
  }

  async update(project: ProjectRow, input: UpdateProjectInput, by?: Actor | null): Promise<ProjectRow> {
    checkNameAndPath(input.name, input.path, false);
    const namespace = await this.namespaces.findByIdIncludingDeleted(project.namespace_id);
    if (input.visibility && namespace?.kind === 'group') checkVisibilityWithin(input.visibility, namespace.visibility);
    const now = this.clock.now();
    const path = input.path ?? project.path;
    const fullPath = `${namespace?.full_path ?? ''}/${path}`;
    try {
      return await this.db.transaction().execute(async (trx) => {
        if (fullPath !== project.full_path) {
          const namespaces = this.namespaces.on(trx);
          await namespaces.dropRedirect(fullPath);
          await namespaces.addRedirect(project.full_path, 'project', project.id, now);
        }
        const updated = await this.projects.on(trx).update(project.id, {
          updated_at: now,
          path,
          full_path: fullPath,
          full_path_lower: fullPath.toLowerCase(),
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.default_branch !== undefined ? { default_branch: input.default_branch } : {}),
        });
        if (!updated) throw new NotFoundError('Project');
        await this.auditSettings(trx, project, updated, by, now);
        // A new path is the established product's "project was moved" (its members are mailed).
        if (updated.full_path !== project.full_path) {
          const moved = { projectId: project.id, authorId: by?.user.id ?? null, fromPath: project.full_path, toPath: updated.full_path };
          await this.bus.publish({ type: 'project_moved', ...moved, at: now }, trx);
        }
        return updated;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('Project path has already been taken');
      throw error;
    }
  }

  /**
   * The settings that matter to the audit trail (visibility, path, name, default branch): one
   * `project_settings_updated` event listing each change as `from`/`to`, none when nothing did.
   */
  private async auditSettings(trx: Executor, before: ProjectRow, after: ProjectRow, by: Actor | null | undefined, at: number) {
    const changes: Record<string, string> = {};
    for (const key of ['visibility', 'full_path', 'name', 'default_branch'] as const) {
      if (before[key] !== after[key]) {
        changes[`${key}_from`] = String(before[key] ?? '');
        changes[`${key}_to`] = String(after[key] ?? '');
      }
    }
    if (Object.keys(changes).length === 0) return;
    const event = projectAudit(by, after, 'project_settings_updated', { type: 'Project', id: after.id, details: after.name }, changes, at);
    await this.bus.publish(event, trx);
  }

  /** Hidden at once; the job worker removes rows and repositories (DELETE answers 202). */
  async scheduleRemoval(project: ProjectRow): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.projects.on(trx).update(project.id, { pending_delete: 1, updated_at: this.clock.now() });
      await this.jobs.enqueue(trx, PROJECT_REMOVAL_JOB, { projectId: project.id });
    });
  }

  async list(actor: Actor | null, filter: ProjectFilter, limit: number, offset: number) {
    return this.projects.list(this.access.listScope(actor), filter, limit, offset);
  }

  /** For storage moves, which also move projects pending deletion (reference §3.1): no access scope. */
  idsOnStorage(storage: string, afterId: number, limit: number): Promise<number[]> {
    return this.projects.idsOnStorage(storage, afterId, limit);
  }

  /** `executor`: a storage move switches the storage inside its own transaction. */
  async setStorage(projectId: number, storage: string, readOnly: boolean, executor: Executor = this.db): Promise<void> {
    await this.projects.on(executor).update(projectId, { repository_storage: storage, repository_read_only: readOnly ? 1 : 0 });
  }

  async setReadOnly(projectId: number, readOnly: boolean, executor: Executor = this.db): Promise<void> {
    await this.projects.on(executor).update(projectId, { repository_read_only: readOnly ? 1 : 0 });
  }

  async touchActivity(projectId: number): Promise<void> {
    await this.projects.update(projectId, { last_activity_at: this.clock.now() });
  }

  /** New repositories go to the first configured storage. */
  private pickStorage(): string {
    const first = this.storages[0];
    if (!first) throw new Error('no repository storage configured');
    return first;
  }
}
