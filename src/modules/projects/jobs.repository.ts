import type { Selectable } from 'kysely';
import { Repository } from '../../infra/db/index.js';
import type { CiJobsTable } from '../../infra/db/tables/auth.js';
import type { UserRow } from '../identity/index.js';

export type JobRow = Selectable<CiJobsTable>;
export type JobStatus = JobRow['status'];

export interface JobWithUser {
  job: JobRow;
  user: Pick<UserRow, 'id' | 'username' | 'is_admin' | 'state' | 'bot'>;
}

export class JobsRepository extends Repository {
  insert(job: { projectId: number; userId: number; digest: string; name: string; ref: string; now: number }): Promise<JobRow> {
    return this.db
      .insertInto('ci_jobs')
      .values({
        project_id: job.projectId,
        user_id: job.userId,
        token_digest: job.digest,
        name: job.name,
        ref: job.ref,
        created_at: job.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findById(id: number): Promise<JobRow | undefined> {
    return this.db.selectFrom('ci_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The job-token lookup: one indexed read by digest, joined with the user running the job. */
  async findByDigestWithUser(digest: string): Promise<JobWithUser | undefined> {
    const row = await this.db
      .selectFrom('ci_jobs as j')
      .innerJoin('users as u', 'u.id', 'j.user_id')
      .selectAll('j')
      .select(['u.username as u_username', 'u.is_admin as u_is_admin', 'u.state as u_state', 'u.bot as u_bot'])
      .where('j.token_digest', '=', digest)
      .executeTakeFirst();
    if (!row) return undefined;
    const { u_username, u_is_admin, u_state, u_bot, ...job } = row;
    return { job, user: { id: job.user_id, username: u_username, is_admin: u_is_admin, state: u_state, bot: u_bot } };
  }

  /** Ends a running job; `undefined` when it was not running (another request finished it first). */
  finish(id: number, status: Exclude<JobStatus, 'running'>, now: number): Promise<JobRow | undefined> {
    return this.db
      .updateTable('ci_jobs')
      .set({ status, finished_at: now })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .returningAll()
      .executeTakeFirst();
  }
}
