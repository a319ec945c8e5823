import type { Selectable, Updateable } from 'kysely';
import { Repository } from '../../infra/db/index.js';
import type { NotificationSettingsTable, UserEmailsTable } from '../../infra/db/tables/notifications-events.js';
import type { SourceKind } from './notifications.levels.js';

export type NotificationSettingRow = Selectable<NotificationSettingsTable>;
export type UserEmailRow = Selectable<UserEmailsTable>;
export type SettingChanges = Updateable<NotificationSettingsTable>;

/** The global setting has no source; it is stored with source_id 0. */
export const GLOBAL_SOURCE_ID = 0;

export class NotificationsRepository extends Repository {
  find(userId: number, kind: SourceKind, sourceId: number): Promise<NotificationSettingRow | undefined> {
    return this.db
      .selectFrom('notification_settings')
      .selectAll()
      .where('user_id', '=', userId)
      .where('source_kind', '=', kind)
      .where('source_id', '=', sourceId)
      .executeTakeFirst();
  }

  insert(userId: number, kind: SourceKind, sourceId: number, level: string, changes: SettingChanges, now: number) {
    return this.db
      .insertInto('notification_settings')
      .values({ level, ...changes, user_id: userId, source_kind: kind, source_id: sourceId, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  update(id: number, changes: SettingChanges, now: number) {
    return this.db
      .updateTable('notification_settings')
      .set({ ...changes, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /**
   * Every setting that can decide these users' level for one project: the project's own,
   * those of the groups above it, and their global ones. One query for any number of users.
   */
  forResolution(userIds: readonly number[], projectId: number, namespaceIds: readonly number[]): Promise<NotificationSettingRow[]> {
    if (userIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('notification_settings')
      .selectAll()
      .where('user_id', 'in', userIds)
      .where((eb) =>
        eb.or([
          eb('source_kind', '=', 'global'),
          eb.and([eb('source_kind', '=', 'project'), eb('source_id', '=', projectId)]),
          ...(namespaceIds.length ? [eb.and([eb('source_kind', '=', 'namespace'), eb('source_id', 'in', namespaceIds)])] : []),
        ]),
      )
      .execute();
  }

  /** A user's group and project settings, for the settings page. */
  listForUser(userId: number): Promise<NotificationSettingRow[]> {
    return this.db
      .selectFrom('notification_settings')
      .selectAll()
      .where('user_id', '=', userId)
      .where('source_kind', '!=', 'global')
      .orderBy('id')
      .limit(1000)
      .execute();
  }

  globalEmails(userIds: readonly number[]): Promise<{ user_id: number; notification_email: string | null }[]> {
    if (userIds.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('notification_settings')
      .select(['user_id', 'notification_email'])
      .where('user_id', 'in', userIds)
      .where('source_kind', '=', 'global')
      .execute();
  }

  listEmails(userId: number): Promise<UserEmailRow[]> {
    return this.db.selectFrom('user_emails').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  }

  insertEmail(userId: number, email: string, confirmedAt: number | null, now: number): Promise<UserEmailRow> {
    return this.db
      .insertInto('user_emails')
      .values({ user_id: userId, email, email_lower: email.toLowerCase(), confirmed_at: confirmedAt, created_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Users with a `watch` or `custom` setting on the project or one of these groups. */
  async watchers(projectId: number, namespaceIds: readonly number[]): Promise<number[]> {
    const rows = await this.db
      .selectFrom('notification_settings')
      .select('user_id')
      .distinct()
      .where('level', 'in', ['watch', 'custom'])
      .where((eb) =>
        eb.or([
          eb.and([eb('source_kind', '=', 'project'), eb('source_id', '=', projectId)]),
          ...(namespaceIds.length > 0 ? [eb.and([eb('source_kind', '=', 'namespace'), eb('source_id', 'in', namespaceIds)])] : []),
        ]),
      )
      .execute();
    return rows.map((row) => row.user_id);
  }
}
