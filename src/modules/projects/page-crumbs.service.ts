import type { Actor } from '../../infra/auth/index.js';
import type { Crumb } from '../../web/index.js';
import type { AccessPolicy } from './access.policy.js';
import type { GroupsService } from './groups.service.js';
import type { NamespaceRow } from './namespaces.repository.js';

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
