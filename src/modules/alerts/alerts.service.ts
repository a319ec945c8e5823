import type { Clock } from '../../infra/clock.js';
import { isUniqueViolation, type Transact } from '../../infra/db/index.js';
import { ConflictError, NotFoundError } from '../../infra/errors/index.js';
import type { Page } from '../../infra/http/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { SettingsInput } from './alerts.schemas.js';
import type { AlertsRepository, AlertFilter, AlertRow, AlertSettingsRow, AlertStatus } from './alerts.repository.js';
import { DEFAULT_SETTINGS } from './ingest.service.js';
import type { AlertActivityRepository, AlertActivityRow } from './activity.repository.js';
import type { Incidents } from './incidents.service.js';

/** Alert views, manual status changes and the project's alert settings. */
export class AlertsService {
  constructor(
    private readonly alerts: AlertsRepository,
    private readonly clock: Clock,
    private readonly activity: AlertActivityRepository,
    private readonly incidents: Incidents,
    private readonly transact: Transact,
  ) {}

  list(project: ProjectRow, filter: AlertFilter, page: Page) {
    return this.alerts.list(project.id, filter, page.limit, page.offset);
  }

  /** The alerts a filter selects from `offset`, at most `limit`, not counted (the list page). */
  rows(project: ProjectRow, filter: AlertFilter, limit: number, offset: number): Promise<AlertRow[]> {
    return this.alerts.page(project.id, filter, limit, offset);
  }

  /** The alert's activity list (status changes, assignment, incident), oldest first. */
  activityOf(alert: AlertRow): Promise<AlertActivityRow[]> {
    return this.activity.list(alert.id);
  }

  /** Sets or clears the assignee (the caller checked they are a project member); recorded in the activity. */
  async assign(project: ProjectRow, iid: number, assignee: { id: number; username: string } | null, authorId: number): Promise<AlertRow> {
    const alert = await this.get(project, iid);
    if (alert.assignee_id === (assignee?.id ?? null)) return alert;
    const now = this.clock.now();
    return this.transact(async (trx) => {
      const updated = await this.alerts.on(trx).update(alert.id, { assignee_id: assignee?.id ?? null, updated_at: now });
      if (!updated) throw new NotFoundError('Alert');
      await this.activity.on(trx).add({
        project_id: project.id,
        alert_id: alert.id,
        kind: 'assignee',
        detail: assignee?.username ?? null,
        author_id: authorId,
        created_at: now,
      });
      return updated;
    });
  }

  /**
   * Opens an incident issue for the alert, authored by the caller, and links it both ways (the
   * alert names the issue; the issue page names the alert). An alert that has one keeps it.
   */
  async createIncident(project: ProjectRow, iid: number, authorId: number): Promise<{ alert: AlertRow; issueIid: number | null }> {
    const alert = await this.get(project, iid);
    if (alert.issue_id !== null) return { alert, issueIid: null };
    const now = this.clock.now();
    const issueIid = await this.transact(async (trx) => {
      const made = await this.incidents.openBy(project, alert, authorId, trx);
      await this.activity
        .on(trx)
        .add({ project_id: project.id, alert_id: alert.id, kind: 'incident', detail: String(made), author_id: authorId, created_at: now });
      return made;
    });
    return { alert: await this.get(project, iid), issueIid };
  }

  /** How many alerts the project has in each status, each counted up to `cap + 1` (alerts.repository.ts). */
  statusCounts(project: ProjectRow, cap: number): Promise<Record<string, number>> {
    return this.alerts.statusCountsUpTo(project.id, cap);
  }

  /** The alert an incident issue was opened for, if it was. */
  findByIssue(project: ProjectRow, issueId: number): Promise<AlertRow | undefined> {
    return this.alerts.findByIssueId(project.id, issueId);
  }

  async get(project: ProjectRow, iid: number): Promise<AlertRow> {
    const alert = await this.alerts.findByIid(project.id, iid);
    if (!alert) throw new NotFoundError('Alert');
    return alert;
  }

  /**
   * Any status may follow any other (reference A7): entering `resolved` sets the end time,
   * leaving it clears it. Reopening while another alert with the same fingerprint is open
   * would make two open alerts of one fingerprint, so it is refused.
   */
  async updateStatus(project: ProjectRow, iid: number, status: AlertStatus, authorId: number | null = null): Promise<AlertRow> {
    const alert = await this.get(project, iid);
    if (alert.status === status) return alert;
    const now = this.clock.now();
    try {
      return await this.transact(async (trx) => {
        const updated = await this.alerts.on(trx).update(alert.id, {
          status,
          ended_at: status === 'resolved' ? now : null,
          updated_at: now,
        });
        if (!updated) throw new NotFoundError('Alert');
        await this.activity
          .on(trx)
          .add({ project_id: project.id, alert_id: alert.id, kind: 'status', detail: status, author_id: authorId, created_at: now });
        return updated;
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(
          'An alert with the same fingerprint is already open. To change the status of this alert, resolve the linked alert.',
        );
      }
      throw error;
    }
  }

  async settings(project: ProjectRow): Promise<Pick<AlertSettingsRow, 'create_issue' | 'auto_close_incident' | 'send_email'>> {
    return (await this.alerts.findSettings(project.id)) ?? DEFAULT_SETTINGS;
  }

  async updateSettings(project: ProjectRow, input: SettingsInput): Promise<AlertSettingsRow> {
    const current = await this.settings(project);
    const flag = (value: boolean | undefined, fallback: number) => (value === undefined ? fallback : value ? 1 : 0);
    return this.alerts.upsertSettings({
      project_id: project.id,
      create_issue: flag(input.create_issue, current.create_issue),
      auto_close_incident: flag(input.auto_close_incident, current.auto_close_incident),
      send_email: flag(input.send_email, current.send_email),
      updated_at: this.clock.now(),
    });
  }
}
