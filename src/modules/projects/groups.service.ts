import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { isUniqueViolation, type Database } from '../../infra/db/index.js';
import { ConflictError, NotFoundError } from '../../infra/errors/index.js';
import { idOf, isNumericRef } from '../../infra/refs.js';
import type { JobQueue } from '../../infra/jobs/index.js';
import { AccessLevel, type AccessPolicy } from './access.policy.js';
import type { MembersRepository } from './members.repository.js';
import { pathPrefixes, type GroupFilter, type NamespaceRow, type NamespacesRepository } from './namespaces.repository.js';
import { checkNameAndPath, checkVisibilityWithin, pathFromName } from './paths.rules.js';
import type { ProjectsRepository } from './projects.repository.js';

export interface CreateGroupInput {
  name: string;
  path?: string | undefined;
  parent_id?: number | null | undefined;
  visibility?: string | undefined;
  description?: string | undefined;
}

export interface UpdateGroupInput {
  name?: string | undefined;
  path?: string | undefined;
  visibility?: string | undefined;
  description?: string | undefined;
}

/**
 * What a reference names: the row, or for an old path of a renamed project or group, where it
 * went (`target`, so that the caller checks access on it before it answers with a redirect).
 */
export type Found<T> =
  | { row: T; movedTo?: undefined; target?: undefined }
  | { row?: undefined; movedTo: string; target: T }
  | { row?: undefined; movedTo?: undefined; target?: undefined };

export const GROUP_REMOVAL_JOB = 'groups.remove';

export class GroupsService {
  constructor(
    private readonly db: Database,
    private readonly namespaces: NamespacesRepository,
    private readonly members: MembersRepository,
    private readonly projects: ProjectsRepository,
    private readonly clock: Clock,
    private readonly access: AccessPolicy,
    private readonly jobs: JobQueue,
    private readonly bus: DomainEventBus,
  ) {}

  /** By id or full path; a renamed group's old path answers with where it went. */
  async findByRef(ref: string): Promise<Found<NamespaceRow>> {
    if (isNumericRef(ref)) {
      const id = idOf(ref);
      const row = id === null ? undefined : await this.namespaces.findById(id);
      return row?.kind === 'group' ? { row } : {};
    }
    const row = await this.namespaces.findByFullPath(ref);
    if (row?.kind === 'group') return { row };
    if (row) return {};
    const redirect = await resolveRedirect(this.namespaces, ref);
    if (redirect?.kind === 'path') {
      const target = await this.namespaces.findByFullPath(redirect.path);
      if (target?.kind === 'group') return { movedTo: target.full_path, target };
    }
    return {};
  }

  async create(actor: Actor, input: CreateGroupInput): Promise<NamespaceRow> {
    const path = input.path ?? pathFromName(input.name);
    const parentId = input.parent_id ?? null;
    checkNameAndPath(input.name, path, parentId === null);
    let parent: NamespaceRow | null = null;
    if (parentId !== null) {
      const found = await this.namespaces.findById(parentId);
      parent = (await this.access.checkGroup(actor, found, AccessLevel.MAINTAINER)).group;
    }
    const visibility = input.visibility ?? parent?.visibility ?? 'private';
    checkVisibilityWithin(visibility, parent?.visibility ?? null);
    const fullPath = parent ? `${parent.full_path}/${path}` : path;
    const now = this.clock.now();
    try {
      return await this.db.transaction().execute(async (trx) => {
        const namespaces = this.namespaces.on(trx);
        await namespaces.dropRedirect(fullPath);
        const group = await namespaces.insert({
          kind: 'group',
          name: input.name,
          path,
          fullPath,
          parentId,
          ownerId: null,
          visibility,
          description: input.description ?? '',
          now,
        });
        await this.members.on(trx).insert('namespace', group.id, actor.user.id, AccessLevel.OWNER, actor.user.id, null, now);
        await this.bus.publish({ type: 'group_created', namespaceId: group.id, authorId: actor.user.id, at: now }, trx);
        return group;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('Failed to save group {:path=>["has already been taken"]}');
      throw error;
    }
  }

  /** Renaming the path moves every subgroup and project below and keeps the old path as a redirect. */
  async update(group: NamespaceRow, input: UpdateGroupInput): Promise<NamespaceRow> {
    checkNameAndPath(input.name, input.path, group.parent_id === null);
    const parent = group.parent_id !== null ? await this.namespaces.findById(group.parent_id) : undefined;
    if (input.visibility) checkVisibilityWithin(input.visibility, parent?.visibility ?? null);
    const now = this.clock.now();
    const newPath = input.path ?? group.path;
    const newFullPath = parent ? `${parent.full_path}/${newPath}` : newPath;
    try {
      return await this.db.transaction().execute(async (trx) => {
        const namespaces = this.namespaces.on(trx);
        if (newFullPath !== group.full_path) {
          await namespaces.dropRedirect(newFullPath);
          await moveTree(namespaces, this.projects.on(trx), group.full_path, newFullPath, now);
          await namespaces.addRedirect(group.full_path, 'namespace', group.id, now);
        }
        const updated = await namespaces.update(group.id, {
          updated_at: now,
          path: newPath,
          full_path: newFullPath,
          full_path_lower: newFullPath.toLowerCase(),
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
        });
        if (!updated) throw new NotFoundError('Group');
        return updated;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('Failed to save group {:path=>["has already been taken"]}');
      throw error;
    }
  }

  /** Marks the group and everything below it for deletion; the job worker removes them. */
  async scheduleRemoval(group: NamespaceRow): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      const namespaces = this.namespaces.on(trx);
      const below = await namespaces.descendants(group.full_path);
      for (const ns of [group, ...below]) await namespaces.update(ns.id, { pending_delete: 1, updated_at: now });
      const projects = await this.projects.on(trx).listInNamespaces([group.id, ...below.map((n) => n.id)]);
      for (const p of projects) await this.projects.on(trx).update(p.id, { pending_delete: 1, updated_at: now });
      await this.jobs.enqueue(trx, GROUP_REMOVAL_JOB, { groupId: group.id });
    });
  }

  list(filter: GroupFilter & { parentId?: number }, limit: number, offset: number) {
    return this.namespaces.listGroups(filter, limit, offset);
  }

  findById(id: number): Promise<NamespaceRow | undefined> {
    return this.namespaces.findById(id);
  }

  findByIdIncludingDeleted(id: number): Promise<NamespaceRow | undefined> {
    return this.namespaces.findByIdIncludingDeleted(id);
  }

  ancestry(namespace: NamespaceRow): Promise<NamespaceRow[]> {
    return this.namespaces.ancestry(namespace.full_path);
  }

  descendants(namespace: NamespaceRow): Promise<NamespaceRow[]> {
    return this.namespaces.descendants(namespace.full_path);
  }

  /** The personal namespace of a user, created with the user (bus: user_created). */
  personalNamespace(userId: number): Promise<NamespaceRow | undefined> {
    return this.namespaces.findPersonal(userId);
  }
}

/** Where an old path now points, following a project or namespace redirect. */
export type RedirectTarget = { kind: 'path'; path: string } | { kind: 'project'; id: number };

export async function resolveRedirect(namespaces: NamespacesRepository, ref: string): Promise<RedirectTarget | null> {
  const prefixes = pathPrefixes(ref);
  const redirects = await namespaces.findRedirects(prefixes);
  // The longest matching prefix wins: an exact project redirect before its group's.
  const best = redirects.sort((a, b) => b.path_lower.length - a.path_lower.length)[0];
  if (!best) return null;
  const rest = ref.slice(best.path_lower.length);
  if (best.source_kind === 'namespace') {
    const target = await namespaces.findById(best.source_id);
    return target ? { kind: 'path', path: target.full_path + rest } : null;
  }
  return rest === '' ? { kind: 'project', id: best.source_id } : null;
}

/** Rewrites full paths of every namespace and project below `from` to live below `to`. */
async function moveTree(
  namespaces: NamespacesRepository,
  projects: ProjectsRepository,
  from: string,
  to: string,
  now: number,
): Promise<void> {
  const below = await namespaces.descendants(from);
  for (const ns of below) {
    const fullPath = to + ns.full_path.slice(from.length);
    await namespaces.update(ns.id, { full_path: fullPath, full_path_lower: fullPath.toLowerCase(), updated_at: now });
  }
  const nsIds = (await namespaces.ancestry(from)).filter((n) => n.full_path.length === from.length).map((n) => n.id);
  for (const p of await projects.listInNamespaces([...nsIds, ...below.map((n) => n.id)])) {
    const fullPath = to + p.full_path.slice(from.length);
    await projects.update(p.id, { full_path: fullPath, full_path_lower: fullPath.toLowerCase(), updated_at: now });
  }
}
