import { coreMigration } from './0001_core.js';
import { authMigration } from './0002_auth.js';
import { errorTrackingMigration } from './0005_error_tracking.js';
import { alertsMigration } from './0004_alerts.js';
import { oauthMigration } from './0003_oauth.js';
import { notificationsEventsMigration } from './0006_notifications_events.js';
import { gitMigration } from './0007_git.js';
import { cacheEpochsMigration } from './0008_cache_epochs.js';
import { oauthTokenIdsMigration } from './0009_oauth_token_ids.js';
import { errorEventIdsMigration } from './0010_error_event_ids.js';
import { errorFingerprintKeysMigration } from './0011_error_fingerprint_keys.js';
import { projectsActivityIndexMigration } from './0012_projects_activity_index.js';
import { outboxMigration } from './0013_outbox.js';
import { webhooksMigration } from './0014_webhooks.js';
import { alertActivityMigration } from './0015_alert_activity.js';
import { errorPagesMigration } from './0016_error_pages.js';
import { auditEventsMigration } from './0017_audit_events.js';
import { issueAssigneesMigration } from './0018_issue_assignees.js';
import { notificationMailEventsMigration } from './0019_notification_mail_events.js';
import { auditEventQueueMigration } from './0020_audit_event_queue.js';
import { auditEventSetsMigration } from './0021_audit_event_sets.js';
import { auditSetsWithoutAutoincrementMigration } from './0022_audit_sets_without_autoincrement.js';
import type { MigrationFactory } from './helpers.js';

/**
 * Every migration, by name; names sort in the order they run. Numbers are reserved per
 * area so work on different areas never collides: 0001 core, 0002 auth, 0003 oauth,
 * 0004 alerts, 0005 error tracking, 0006 notifications and events, 0007 git, 0008 cache epochs;
 * later changes take the next free number (0009 OAuth token ids, 0010 error event ids,
 * 0011 error fingerprint keys, 0012 the projects' activity index, 0013 the outbox, 0014 webhooks, 0015 alert activity,
 * 0016 the error list pages' indexes, 0017 audit events, 0018 issue assignees and due dates, 0019 sign-in addresses and error mail settings,
 * 0020 the audit event queue, 0021 audit event sets, 0022 audit event sets without AUTOINCREMENT).
 * A shipped migration is never edited; a change is a new file.
 */
export const migrations: Record<string, MigrationFactory> = {
  '0001_core': coreMigration,
  '0002_auth': authMigration,
  '0005_error_tracking': errorTrackingMigration,
  '0004_alerts': alertsMigration,
  '0003_oauth': oauthMigration,
  '0006_notifications_events': notificationsEventsMigration,
  '0007_git': gitMigration,
  '0008_cache_epochs': cacheEpochsMigration,
  '0009_oauth_token_ids': oauthTokenIdsMigration,
  '0010_error_event_ids': errorEventIdsMigration,
  '0011_error_fingerprint_keys': errorFingerprintKeysMigration,
  '0012_projects_activity_index': projectsActivityIndexMigration,
  '0013_outbox': outboxMigration,
  '0014_webhooks': webhooksMigration,
  '0015_alert_activity': alertActivityMigration,
  '0016_error_pages': errorPagesMigration,
  '0017_audit_events': auditEventsMigration,
  '0018_issue_assignees': issueAssigneesMigration,
  '0019_notification_mail_events': notificationMailEventsMigration,
  '0020_audit_event_queue': auditEventQueueMigration,
  '0021_audit_event_sets': auditEventSetsMigration,
  '0022_audit_sets_without_autoincrement': auditSetsWithoutAutoincrementMigration,
};
