import { toIso, toIsoOrNull } from '../../infra/clock.js';
import { mapUserBasic, type UserRow } from '../identity/index.js';
import type { JobRow } from './jobs.repository.js';
import type { ProjectRow } from './projects.repository.js';
import type { JobEntity } from './jobs.schemas.js';

/** The job entity: the established product's fields that a job of ours has. */
export function mapJob(job: JobRow, project: ProjectRow, user: UserRow | undefined, base: string): JobEntity {
  return {
    id: job.id,
    name: job.name,
    ref: job.ref,
    status: job.status,
    created_at: toIso(job.created_at),
    started_at: toIso(job.created_at),
    finished_at: toIsoOrNull(job.finished_at),
    duration: job.finished_at === null ? null : (job.finished_at - job.created_at) / 1000,
    web_url: `${base}/${project.full_path}/-/jobs/${job.id}`,
    project: { id: project.id, name: project.name, path_with_namespace: project.full_path },
    user: user ? mapUserBasic(user, base) : null,
  };
}
