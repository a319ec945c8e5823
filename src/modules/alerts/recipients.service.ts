import { AccessLevel, type ProjectRow, type ProjectsModule } from '../projects/index.js';

/**
 * Maintainers and owners of the project (direct, through any group above it, or owning the
 * personal namespace). The established product mails fired alerts to them; here they count
 * as participants, so their notification level still decides (disabled and mention-only
 * opt out), and watchers of the project get the email too.
 */
export async function maintainerIds(projects: ProjectsModule, project: ProjectRow, now: number): Promise<number[]> {
  const ids = new Set<number>();
  const namespace = await projects.groups.findByIdIncludingDeleted(project.namespace_id);
  if (namespace?.kind === 'user' && namespace.owner_id !== null) ids.add(namespace.owner_id);
  const ancestry = namespace?.kind === 'group' ? await projects.groups.ancestry(namespace) : [];
  const rows = [
    ...(await projects.members.listAll('project', [project.id])),
    ...(ancestry.length > 0
      ? await projects.members.listAll(
          'namespace',
          ancestry.map((n) => n.id),
        )
      : []),
  ];
  for (const m of rows) {
    if (m.access_level >= AccessLevel.MAINTAINER && (m.expires_at === null || m.expires_at > now)) ids.add(m.user_id);
  }
  return [...ids].sort((a, b) => a - b);
}
