import type { Actor } from '../../infra/auth/index.js';
import type { Crumb } from '../../web/index.js';
import type { AccessPolicy } from './access.policy.js';
import type { GroupsService } from './groups.service.js';
import type { NamespaceRow } from './namespaces.repository.js';
import { VersionCache } from '../../infra/db/index.js';
import type { Platform } from '../../infra/platform.js';
import type { ProjectRow } from './projects.repository.js';
import type { ProjectsService } from './projects.service.js';

/**
 * The trail above a project or group page: its owner, or its groups root first. A group the
 * viewer may not see (a project member outside a private group) is named but not linked, so
 * the trail never leads to a 404.
 */
export async function namespaceCrumbs(
  deps: { groups: GroupsService; access: AccessPolicy },
  namespace: NamespaceRow | undefined,
  viewer: Actor | null,
): Promise<Crumb[]> {
  if (!namespace) return [];
  if (namespace.kind === 'user') return [{ label: namespace.name, href: `/${namespace.full_path}` }];
  const ancestry = await deps.groups.ancestry(namespace);
  return Promise.all(ancestry.map((group) => groupCrumb(deps.access, group, viewer)));
}

export async function groupCrumb(access: AccessPolicy, group: NamespaceRow, viewer: Actor | null): Promise<Crumb> {
  const visible = access.canSee(viewer, group.visibility, await access.namespaceLevel(viewer, group));
  return visible ? { label: group.name, href: `/groups/${group.full_path}` } : { label: group.name };
}

/**
 * A project page's trail (namespaceCrumbs of its namespace) for one viewer, kept until the next
 * commit and 10 s at most, as the page layer keeps the project itself: every view of a project
 * page draws it, and it costs one or two round trips (the namespace, its ancestry, the viewer's
 * levels) that a kept view otherwise would not make.
 */
export class ProjectTrails {
  private readonly kept: VersionCache<Crumb[]>;

  constructor(
    private readonly deps: { groups: GroupsService; access: AccessPolicy; projects: ProjectsService },
    platform: Pick<Platform, 'database' | 'clock'>,
  ) {
    this.kept = new VersionCache<Crumb[]>({
      dataVersion: (scope) => platform.database.dataVersion(scope),
      clock: platform.clock,
      ttlMs: 10_000,
      maxEntries: 5000,
      maxBytes: 2 * 1024 * 1024,
    });
  }

  /** `scope`: the request drawing the page (version-cache.ts). */
  of(project: ProjectRow, viewer: Actor | null, scope?: object): Promise<Crumb[]> {
    return this.kept.through(
      `${project.namespace_id}\n${viewer?.user.id ?? 0}`,
      async () => namespaceCrumbs(this.deps, await this.deps.projects.namespaceOf(project), viewer),
      (crumbs) => 64 + crumbs.reduce((sum, crumb) => sum + crumb.label.length + (crumb.href?.length ?? 0), 0),
      scope,
    );
  }
}
