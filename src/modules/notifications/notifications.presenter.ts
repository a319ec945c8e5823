import type { Static } from '@sinclair/typebox';
import type { GlobalSetting, Setting } from './notifications.schemas.js';
import type { GlobalSettingView, SettingView } from './notifications.service.js';

/** `API::Entities::NotificationSetting`: `events` only for `custom` (reference §1.4). */
export function mapSetting(view: SettingView): Static<typeof Setting> {
  return { level: view.level, ...(view.level === 'custom' ? { events: view.events } : {}) };
}

/**
 * The global setting is `{level, notification_email}` whatever the level: SPEC returns `events`
 * only for group and project settings (the reference's entity adds them for `custom` here too;
 * the spec wins). Its custom events are still stored and still decide who is notified.
 */
export function mapGlobalSetting(view: GlobalSettingView): Static<typeof GlobalSetting> {
  return { level: view.level, notification_email: view.notification_email };
}
