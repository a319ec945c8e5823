import type { Actor } from '../../infra/auth/index.js';
import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import type { ErrorStatus } from '../../infra/db/tables/error-tracking.js';
import { ConflictError, NotFoundError } from '../../infra/errors/index.js';
import type { IssueRow, IssuesService, ProjectRow } from '../projects/index.js';
import type { Bucket } from './charts.rules.js';
import { issueDescription } from './errors.presenter.js';
import type { ErrorsRepository, ErrorEventRow, ErrorFilter, ErrorRow } from './errors.repository.js';

const HOUR = 3_600_000;

export type { Bucket } from './charts.rules.js';

export interface ErrorDetails {
  error: ErrorRow;
  userCount: number;
  latest: ErrorEventRow | undefined;
  last24h: Bucket[];
  last30d: Bucket[];
}

/** One event of an error as the error page shows it, with its neighbours in time. */
export interface EventView {
  event: ErrorEventRow;
  latest: boolean;
  older: string | null;
  newer: string | null;
}

/** A page of the error list with each row's events per hour over the last 24 hours. */
export interface ErrorListPage {
  rows: ErrorRow[];
  more: boolean;
  /** Matching errors, counted up to COUNT_CAP + 1; null when not counted (a search or filter). */
  count: number | null;
  users: Map<number, number>;
  sparklines: Map<number, Bucket[]>;
}

const buckets = (from: number, hours: number, counts: Map<number, number> | undefined): Bucket[] =>
  Array.from({ length: hours }, (_, i) => ({ at: from + i * HOUR, count: counts?.get(from + i * HOUR) ?? 0 }));

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

  /**
   * The list page: rows, users and 24-hour sparklines in a fixed number of statements. The count
   * is the caller's (a tab's, when nothing else filters); a search or filter is not counted, as
   * counting what few errors match reads every error of the tab.
   */
  async page(projectId: number, filter: ErrorFilter, limit: number, offset: number, count: number | null): Promise<ErrorListPage> {
    const { rows, more } = await this.repo.page(projectId, filter, limit, offset);
    const ids = rows.map((r) => r.id);
    const { from, hours } = this.window(24);
    const [users, hourly] = await Promise.all([this.repo.userCounts(ids), this.repo.hourlyCountsOf(ids, from)]);
    const sparklines = new Map(rows.map((r) => [r.id, buckets(from, hours, hourly.get(r.id))]));
    return { rows, more, count, users, sparklines };
  }

  /** Errors per status (each capped at COUNT_CAP + 1) for the list's tabs. */
  statusCounts(projectId: number) {
    return this.repo.statusCounts(projectId);
  }

  hasAny(projectId: number): Promise<boolean> {
    return this.repo.hasAny(projectId);
  }

  /**
   * The event the error page shows: `eventId`'s, or the latest; with the ids of the events just
   * older and newer. Undefined when the error has no such event.
   */
  async event(error: ErrorRow, eventId: string | undefined): Promise<EventView | undefined> {
    const latest = await this.repo.latestEvent(error.id);
    const event =
      eventId === undefined || eventId === latest?.event_id ? latest : await this.repo.findEvent(error.project_id, error.id, eventId);
    if (!event) return undefined;
    const [older, newer] = await Promise.all([this.repo.neighbourEvent(event, 'older'), this.repo.neighbourEvent(event, 'newer')]);
    return { event, latest: event.id === latest?.id, older: older?.event_id ?? null, newer: newer?.event_id ?? null };
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
    const { from } = this.window(hours);
    return buckets(from, hours, await this.repo.hourlyCounts(errorId, from));
  }

  /** The last `hours` whole hours, the current one last. */
  private window(hours: number): { from: number; hours: number } {
    const current = this.clock.now() - (this.clock.now() % HOUR);
    return { from: current - (hours - 1) * HOUR, hours };
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
