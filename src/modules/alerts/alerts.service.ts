import type { Clock } from '../../infra/clock.js';
import { isUniqueViolation } from '../../infra/db/index.js';
import { ConflictError, NotFoundError } from '../../infra/errors/index.js';
import type { Page } from '../../infra/http/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { SettingsInput } from './alerts.schemas.js';
import type { AlertsRepository, AlertFilter, AlertRow, AlertSettingsRow, AlertStatus } from './alerts.repository.js';
import { DEFAULT_SETTINGS } from './ingest.service.js';

/** Alert views, manual status changes and the project's alert settings. */
export class AlertsService {
  constructor(
    private readonly alerts: AlertsRepository,
    private readonly clock: Clock,
  ) {}

  list(project: ProjectRow, filter: AlertFilter, page: Page) {
    return this.alerts.list(project.id, filter, page.limit, page.offset);
  }

  statusCounts(project: ProjectRow): Promise<Record<string, number>> {
    return this.alerts.statusCounts(project.id);
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
  async updateStatus(project: ProjectRow, iid: number, status: AlertStatus): Promise<AlertRow> {
    const alert = await this.get(project, iid);
    if (alert.status === status) return alert;
    const now = this.clock.now();
    try {
      const updated = await this.alerts.update(alert.id, {
        status,
        ended_at: status === 'resolved' ? now : null,
        updated_at: now,
      });
      if (!updated) throw new NotFoundError('Alert');
      return updated;
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
