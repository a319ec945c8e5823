import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import type { JobQueue } from '../../infra/jobs/index.js';
import { GROUP_REMOVAL_JOB } from './groups.service.js';
import type { MembersRepository } from './members.repository.js';
import type { NamespacesRepository } from './namespaces.repository.js';
import { PROJECT_REMOVAL_JOB } from './projects.service.js';
import type { ProjectsRepository } from './projects.repository.js';

/**
 * The worker half of DELETE /projects/:id and /groups/:id (answered 202): rows go in one
 * transaction per project, and `project_removing` lets the git module drop repositories.
 */
export function registerRemovalJobs(
  db: Database,
  rows: { projects: ProjectsRepository; namespaces: NamespacesRepository; members: MembersRepository },
  jobs: JobQueue,
  bus: DomainEventBus,
  clock: Clock,
): void {
  const removeProject = async (projectId: number) => {
    await db.transaction().execute(async (trx) => {
      const project = await rows.projects.on(trx).findByIdIncludingDeleted(projectId);
      if (!project) return;
      await bus.publish(
        { type: 'project_removing', projectId, storage: project.repository_storage, fullPath: project.full_path, at: clock.now() },
        trx,
      );
      await trx.deleteFrom('snippets').where('project_id', '=', projectId).execute();
      await trx.deleteFrom('issues').where('project_id', '=', projectId).execute();
      await rows.projects.on(trx).delete(projectId);
    });
  };

  jobs.register(PROJECT_REMOVAL_JOB, async (payload) => {
    await removeProject((payload as { projectId: number }).projectId);
  });

  jobs.register(GROUP_REMOVAL_JOB, async (payload, context) => {
    const { groupId } = payload as { groupId: number };
    const { namespaces } = rows;
    const group = await namespaces.findByIdIncludingDeleted(groupId);
    if (!group) return;
    const all = [group, ...(await namespaces.descendants(group.full_path))];
    for (const project of await rows.projects.listInNamespaces(all.map((n) => n.id))) {
      await removeProject(project.id);
      await context.heartbeat();
    }
    // Deepest first, so no namespace is removed before its children.
    for (const ns of all.sort((a, b) => b.full_path.length - a.full_path.length)) {
      await db.transaction().execute(async (trx) => {
        await bus.publish({ type: 'group_removing', namespaceId: ns.id, fullPath: ns.full_path, at: clock.now() }, trx);
        await rows.members.on(trx).deleteForSource('namespace', ns.id);
        await rows.namespaces.on(trx).delete(ns.id);
      });
    }
  });
}
