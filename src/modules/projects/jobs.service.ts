import type { Actor, ResolvedJob } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import { TOKEN_PREFIX, digestToken, generateToken } from '../../infra/crypto.js';
import { BadRequestError, NotFoundError, ValidationError } from '../../infra/errors/index.js';
import { toActorUser } from '../identity/index.js';
import type { JobsRepository, JobRow, JobStatus } from './jobs.repository.js';
import type { ProjectRow } from './projects.repository.js';

export interface CreateJobInput {
  name?: string | undefined;
  ref?: string | undefined;
}

/**
 * CI jobs as far as authentication needs them (DESIGN.md §4): a runner registers a running
 * job and receives its job token (`bsj_`, stored as a digest); the token acts as the user
 * who started the job, on that job's project only, until the job ends.
 */
export class JobsService {
  constructor(
    private readonly jobs: JobsRepository,
    private readonly clock: Clock,
  ) {}

  async create(project: ProjectRow, actor: Actor, input: CreateJobInput): Promise<{ row: JobRow; token: string }> {
    const name = input.name ?? 'job';
    const ref = input.ref ?? project.default_branch;
    if (name.trim() === '') throw ValidationError.field('name', "can't be blank");
    const token = generateToken(TOKEN_PREFIX.job);
    const row = await this.jobs.insert({
      projectId: project.id,
      userId: actor.user.id,
      digest: digestToken(token),
      name,
      ref,
      now: this.clock.now(),
    });
    return { row, token };
  }

  async get(project: ProjectRow, id: number): Promise<JobRow> {
    const row = await this.jobs.findById(id);
    if (!row || row.project_id !== project.id) throw new NotFoundError('Job');
    return row;
  }

  findById(id: number): Promise<JobRow | undefined> {
    return this.jobs.findById(id);
  }

  /** Ends the job; its token stops working at once (reference §1.2 step 3: running jobs only). */
  async finish(project: ProjectRow, id: number, status: Exclude<JobStatus, 'running'>): Promise<JobRow> {
    const job = await this.get(project, id);
    const finished = job.status === 'running' ? await this.jobs.finish(job.id, status, this.clock.now()) : undefined;
    if (!finished) throw new BadRequestError('400 Bad request - Job is not running');
    return finished;
  }

  /** The auth port. Not cached: a finished job's token must fail on the next request. */
  async resolve(secret: string): Promise<ResolvedJob | null> {
    if (!secret.startsWith(TOKEN_PREFIX.job) || secret.length > 128) return null;
    const found = await this.jobs.findByDigestWithUser(digestToken(secret));
    if (!found) return null;
    return { id: found.job.id, projectId: found.job.project_id, running: found.job.status === 'running', user: toActorUser(found.user) };
  }
}
