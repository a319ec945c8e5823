import type { GlobalSettingView, SettingView } from './notifications.service.js';

/** `API::Entities::NotificationSetting`: `events` only for `custom` (reference §1.4). */
export function mapSetting(view: SettingView) {
  return { level: view.level, ...(view.level === 'custom' ? { events: view.events } : {}) };
}

/** `GlobalNotificationSetting` adds the address notifications go to. */
export function mapGlobalSetting(view: GlobalSettingView) {
  return { level: view.level, notification_email: view.notification_email, ...(view.level === 'custom' ? { events: view.events } : {}) };
}
