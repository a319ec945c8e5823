import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import type { JobQueue } from '../../infra/jobs/index.js';
import { GROUP_REMOVAL_JOB } from './groups.service.js';
import { MembersRepository } from './members.repository.js';
import { NamespacesRepository } from './namespaces.repository.js';
import { PROJECT_REMOVAL_JOB } from './projects.service.js';
import { ProjectsRepository } from './projects.repository.js';

/**
 * The worker half of DELETE /projects/:id and /groups/:id (answered 202): rows go in one
 * transaction per project, and `project_removing` lets the git module drop repositories.
 */
export function registerRemovalJobs(db: Database, jobs: JobQueue, bus: DomainEventBus, clock: Clock): void {
  const removeProject = async (projectId: number) => {
    await db.transaction().execute(async (trx) => {
      const project = await new ProjectsRepository(trx).findByIdIncludingDeleted(projectId);
      if (!project) return;
      await bus.publish(
        { type: 'project_removing', projectId, storage: project.repository_storage, fullPath: project.full_path, at: clock.now() },
        trx,
      );
      await trx.deleteFrom('snippets').where('project_id', '=', projectId).execute();
      await trx.deleteFrom('issues').where('project_id', '=', projectId).execute();
      await new ProjectsRepository(trx).delete(projectId);
    });
  };

  jobs.register(PROJECT_REMOVAL_JOB, async (payload) => {
    await removeProject((payload as { projectId: number }).projectId);
  });

  jobs.register(GROUP_REMOVAL_JOB, async (payload, context) => {
    const { groupId } = payload as { groupId: number };
    const namespaces = new NamespacesRepository(db);
    const group = await namespaces.findByIdIncludingDeleted(groupId);
    if (!group) return;
    const all = [group, ...(await namespaces.descendants(group.full_path))];
    for (const project of await new ProjectsRepository(db).listInNamespaces(all.map((n) => n.id))) {
      await removeProject(project.id);
      await context.heartbeat();
    }
    // Deepest first, so no namespace is removed before its children.
    for (const ns of all.sort((a, b) => b.full_path.length - a.full_path.length)) {
      await db.transaction().execute(async (trx) => {
        await bus.publish({ type: 'group_removing', namespaceId: ns.id, fullPath: ns.full_path, at: clock.now() }, trx);
        await new MembersRepository(trx).deleteForSource('namespace', ns.id);
        await new NamespacesRepository(trx).delete(ns.id);
      });
    }
  });
}
