import type { Insertable, Selectable } from 'kysely';
import { Repository } from '../../infra/db/index.js';
import type { AlertActivityTable } from '../../infra/db/tables/alerts.js';

export type AlertActivityRow = Selectable<AlertActivityTable>;
export type NewAlertActivity = Insertable<AlertActivityTable>;

/** The most an alert's page lists: the newest entries (an alert flapping for months has many). */
export const ACTIVITY_SHOWN = 100;

/** What happened to an alert (migration 0015): written beside each change, read on its page. */
export class AlertActivityRepository extends Repository {
  async add(row: NewAlertActivity): Promise<void> {
    await this.db.insertInto('alert_activity').values(row).execute();
  }

  /** The newest ACTIVITY_SHOWN entries, oldest first, on the `alert_activity_alert` index. */
  async list(alertId: number): Promise<AlertActivityRow[]> {
    const rows = await this.db
      .selectFrom('alert_activity')
      .selectAll()
      .where('alert_id', '=', alertId)
      .orderBy('id', 'desc')
      .limit(ACTIVITY_SHOWN)
      .execute();
    return rows.reverse();
  }
}
