import type { Actor } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import { ForbiddenError, NotFoundError } from '../../infra/errors/index.js';
import type { MembersRepository } from './members.repository.js';
import type { NamespacesRepository, NamespaceRow } from './namespaces.repository.js';
import type { ProjectRow, ProjectScope } from './projects.repository.js';
import type { ListScope } from './scopes.repository.js';

export const AccessLevel = {
  NONE: 0,
  GUEST: 10,
  REPORTER: 20,
  DEVELOPER: 30,
  MAINTAINER: 40,
  OWNER: 50,
} as const;
export const MEMBER_LEVELS = [10, 20, 30, 40, 50] as const;

export type Visibility = 'private' | 'internal' | 'public';

/**
 * Who may see and do what (CONVENTIONS.md rule 4): what the caller cannot see is a 404,
 * what it can see but may not do is a 403. Levels come from direct project membership,
 * membership of the namespace or any ancestor group, or owning the personal namespace.
 */
export class AccessPolicy {
  constructor(
    private readonly namespaces: NamespacesRepository,
    private readonly members: MembersRepository,
    private readonly clock: Clock,
  ) {}

  async namespaceLevel(actor: Actor | null, namespace: NamespaceRow): Promise<number> {
    if (!actor) return AccessLevel.NONE;
    // Before the administrator's rule: a job token reaches no namespace, whoever runs the job.
    if (actor.credential.kind === 'job_token') return AccessLevel.NONE;
    if (actor.user.isAdmin) return AccessLevel.OWNER;
    if (namespace.kind === 'user') return namespace.owner_id === actor.user.id ? AccessLevel.OWNER : AccessLevel.NONE;
    const ancestry = await this.namespaces.ancestry(namespace.full_path);
    const rows = await this.members.levelsFor(
      actor.user.id,
      ancestry.map((n) => n.id),
      null,
      this.clock.now(),
    );
    return Math.max(AccessLevel.NONE, ...rows.map((r) => r.access_level));
  }

  async projectLevel(actor: Actor | null, project: ProjectRow): Promise<number> {
    if (!actor) return AccessLevel.NONE;
    // A job token reaches only its own project, with the rights of the user running the job —
    // checked before the administrator's rule, so an administrator's job is confined too.
    if (actor.credential.kind === 'job_token' && actor.credential.projectId !== project.id) return AccessLevel.NONE;
    if (actor.user.isAdmin) return AccessLevel.OWNER;
    const namespace = await this.namespaces.findByIdIncludingDeleted(project.namespace_id);
    if (namespace?.kind === 'user' && namespace.owner_id === actor.user.id) return AccessLevel.OWNER;
    const ancestry = namespace?.kind === 'group' ? await this.namespaces.ancestry(namespace.full_path) : [];
    const rows = await this.members.levelsFor(
      actor.user.id,
      ancestry.map((n) => n.id),
      project.id,
      this.clock.now(),
    );
    return Math.max(AccessLevel.NONE, ...rows.map((r) => r.access_level));
  }

  canSee(actor: Actor | null, visibility: string, level: number): boolean {
    if (level >= AccessLevel.GUEST) return true;
    if (visibility === 'public') return true;
    return visibility === 'internal' && actor !== null && actor.credential.kind !== 'job_token';
  }

  /** The project if the caller may see it, else 404; with `minLevel`, 403 when it may see but not act. */
  async checkProject(actor: Actor | null, project: ProjectRow | undefined, minLevel = 0): Promise<{ project: ProjectRow; level: number }> {
    if (!project) throw new NotFoundError('Project');
    const level = await this.projectLevel(actor, project);
    if (!this.canSee(actor, project.visibility, level)) throw new NotFoundError('Project');
    if (level < minLevel) throw new ForbiddenError();
    return { project, level };
  }

  async checkGroup(actor: Actor | null, group: NamespaceRow | undefined, minLevel = 0): Promise<{ group: NamespaceRow; level: number }> {
    if (!group || group.kind !== 'group') throw new NotFoundError('Group');
    const level = await this.namespaceLevel(actor, group);
    if (!this.canSee(actor, group.visibility, level)) throw new NotFoundError('Group');
    if (level < minLevel) throw new ForbiddenError();
    return { group, level };
  }

  /** What a caller may list, for statements that apply it as subqueries (any number of groups). */
  listScope(actor: Actor | null): ListScope {
    if (actor?.user.isAdmin) return { unrestricted: true };
    if (!actor) return { unrestricted: false, visibilities: ['public'], memberId: null, now: this.clock.now() };
    return { unrestricted: false, visibilities: ['public', 'internal'], memberId: actor.user.id, now: this.clock.now() };
  }

  /**
   * The same as id lists, for callers that need the ids (events, notifications): memberships
   * and what lies below them, read in one statement whose size does not grow with them.
   */
  async projectScope(actor: Actor | null): Promise<ProjectScope> {
    if (actor?.user.isAdmin) return { unrestricted: true, visibilities: [], namespaceIds: [], projectIds: [] };
    if (!actor) return { unrestricted: false, visibilities: ['public'], namespaceIds: [], projectIds: [] };
    const now = this.clock.now();
    const memberships = await this.members.listForUser(actor.user.id, now);
    const personal = await this.namespaces.findPersonal(actor.user.id);
    const namespaceIds = await this.namespaces.memberNamespaceIds(actor.user.id, now);
    if (personal) namespaceIds.push(personal.id);
    return {
      unrestricted: false,
      visibilities: ['public', 'internal'],
      namespaceIds,
      projectIds: memberships.filter((m) => m.source_kind === 'project').map((m) => m.source_id),
    };
  }
}
