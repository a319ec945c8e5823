import type { Actor } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import type { ErrorStatus } from '../../infra/db/tables/error-tracking.js';
import { ConflictError, NotFoundError } from '../../infra/errors/index.js';
import type { IssueRow, IssuesService, ProjectRow } from '../projects/index.js';
import { issueDescription } from './errors.presenter.js';
import type { ErrorsRepository, ErrorEventRow, ErrorFilter, ErrorRow } from './errors.repository.js';

const HOUR = 3_600_000;

export interface Bucket {
  at: number;
  count: number;
}

export interface ErrorDetails {
  error: ErrorRow;
  userCount: number;
  latest: ErrorEventRow | undefined;
  last24h: Bucket[];
  last30d: Bucket[];
}

/** Reading grouped errors, changing their status, and opening an issue from one. */
export class ErrorsService {
  constructor(
    private readonly db: Database,
    private readonly repo: ErrorsRepository,
    private readonly clock: Clock,
    private readonly issues: IssuesService,
    private readonly errorUrl: (project: ProjectRow, errorId: number) => string,
  ) {}

  async list(projectId: number, filter: ErrorFilter, limit: number, offset: number) {
    const { rows, total } = await this.repo.list(projectId, filter, limit, offset);
    const users = await this.repo.userCounts(rows.map((r) => r.id));
    return { rows, total, users };
  }

  async get(projectId: number, errorId: number): Promise<ErrorRow> {
    const row = await this.find(projectId, errorId);
    if (!row) throw new NotFoundError('Error');
    return row;
  }

  /** The error, or undefined when the project has none of that id; a failure of the database throws. */
  find(projectId: number, errorId: number): Promise<ErrorRow | undefined> {
    return this.repo.find(projectId, errorId);
  }

  /** The error an issue was opened from, if it was. */
  findByIssue(projectId: number, issueIid: number): Promise<ErrorRow | undefined> {
    return this.repo.findByIssueIid(projectId, issueIid);
  }

  async details(error: ErrorRow): Promise<ErrorDetails> {
    const users = await this.repo.userCounts([error.id]);
    const latest = await this.repo.latestEvent(error.id);
    const last30d = await this.frequency(error.id, 30 * 24);
    return { error, userCount: users.get(error.id) ?? 0, latest, last24h: last30d.slice(-24), last30d };
  }

  /** Hourly event counts for the last `hours` hours, oldest first, the current hour last. */
  async frequency(errorId: number, hours: number): Promise<Bucket[]> {
    const current = this.clock.now() - (this.clock.now() % HOUR);
    const from = current - (hours - 1) * HOUR;
    const counts = await this.repo.hourlyCounts(errorId, from);
    return Array.from({ length: hours }, (_, i) => ({ at: from + i * HOUR, count: counts.get(from + i * HOUR) ?? 0 }));
  }

  events(errorId: number, limit: number, offset: number) {
    return this.repo.listEvents(errorId, limit, offset);
  }

  setStatus(error: ErrorRow, status: ErrorStatus): Promise<ErrorRow> {
    return this.repo.update(error.id, { status }, this.clock.now());
  }

  /**
   * Opens an issue whose description holds the stack trace and a link back (SPEC "Error
   * tracking management"; reference B8), and links it to the error in the same transaction.
   */
  async createIssue(project: ProjectRow, error: ErrorRow, actor: Actor, level: number): Promise<IssueRow> {
    if (error.issue_iid !== null) {
      const existing = await this.issues.find(project, error.issue_iid, actor, level);
      if (existing) throw new ConflictError(`409 Conflict - issue #${existing.iid} was already created from this error`);
    }
    const details = await this.details(error);
    const description = issueDescription(details, this.errorUrl(project, error.id));
    return this.db.transaction().execute(async (trx) => {
      const issue = await this.issues.create(project, actor.user.id, { title: error.title.slice(0, 255), description }, trx);
      await this.repo.on(trx).update(error.id, { issue_iid: issue.iid }, this.clock.now());
      return issue;
    });
  }

  releaseHealth(projectId: number, days: number, limit: number, offset: number) {
    return this.repo.releaseHealth(projectId, this.clock.now() - days * 24 * HOUR, limit, offset);
  }
}
