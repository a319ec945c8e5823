import { UnauthorizedError } from '../../infra/errors/index.js';
import { requireActor } from '../../infra/auth/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import type { JobRow } from './jobs.repository.js';
import type { JobsService } from './jobs.service.js';
import type { ProjectRow } from './projects.repository.js';
import { AccessLevel } from './access.policy.js';
import { mapJob } from './jobs.presenter.js';
import * as J from './jobs.schemas.js';
import * as S from './projects.schemas.js';
import type { ProjectsRouteDeps } from './projects.deps.js';

/**
 * Job tokens (DESIGN.md §4): a runner registers a job and ends it; the job's token reads
 * `GET /job` and its own project. Only routes flagged `jobToken: true` accept one.
 */
export function jobsRoutes(app: ApiApp, deps: ProjectsRouteDeps & { jobs: JobsService }): void {
  const { platform, lookup, users, projects, jobs } = deps;
  const base = platform.config.externalUrl;
  const tags = ['jobs'];
  const present = async (job: JobRow, project: ProjectRow) =>
    mapJob(job, project, (await users.mapByIds([job.user_id])).get(job.user_id), base);

  app.post(
    '/projects/:id/jobs',
    {
      schema: {
        summary: 'Registers a running job and creates its job token',
        tags,
        params: S.RefParams,
        body: J.CreateJobBody,
        response: { 201: J.JobWithToken },
      },
      config: { policy: { auth: 'required' }, secret: true },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const { row, token } = await jobs.create(project, requireActor(request), request.body);
      return reply.code(201).send({ ...(await present(row, project)), token });
    },
  );

  app.get(
    '/projects/:id/jobs/:job_id',
    {
      schema: { summary: 'Shows a job', tags, params: J.JobParams, response: { 200: J.Job } },
      config: { policy: { auth: 'required' } },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      return present(await jobs.get(project, request.params.job_id), project);
    },
  );

  app.put(
    '/projects/:id/jobs/:job_id',
    {
      schema: { summary: 'Ends a job with its status', tags, params: J.JobParams, body: J.FinishJobBody, response: { 200: J.Job } },
      config: { policy: { auth: 'required' } },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return present(await jobs.finish(project, request.params.job_id, request.body.status), project);
    },
  );

  app.get(
    '/job',
    {
      schema: { summary: 'Shows the job whose job token authenticates the request', tags, response: { 200: J.Job } },
      config: { policy: { auth: 'required', jobToken: true } },
    },
    async (request) => {
      const actor = requireActor(request);
      // Only the job's own token answers "which job am I" (the established product's `authenticate_job!`).
      if (actor.credential.kind !== 'job_token') throw new UnauthorizedError();
      const job = await jobs.findById(actor.credential.id);
      const project = job ? await projects.findById(job.project_id) : undefined;
      if (!job || !project) throw new UnauthorizedError();
      return present(job, project);
    },
  );
}
