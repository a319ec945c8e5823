import type { ModuleRoutes, Platform } from '../../infra/platform.js';
import type { NotificationsModuleDeps } from './notifications.deps.js';
import { notificationsPages } from './notifications.page-routes.js';
import { notificationsRoutes } from './notifications.routes.js';
import { NotificationsRepository } from './notifications.repository.js';
import { NotificationsService } from './notifications.service.js';
import { NotificationMailer } from './notification-mail.service.js';
import { notificationJobs } from './notifications.jobs.js';
import { eventMailJobs } from './event-mail.jobs.js';
import { unsubscribeRoutes } from './unsubscribe.routes.js';

export { NotificationsService } from './notifications.service.js';
export { NotificationMailer } from './notification-mail.service.js';
export type { NotificationsModuleDeps } from './notifications.deps.js';
export type { SettingView, GlobalSettingView } from './notifications.service.js';
export type { Participation } from './notifications.rules.js';
export { LEVELS, ALL_EVENTS, type Level, type NotificationEvent } from './notifications.levels.js';

/** The notification settings API; on the page layer, the settings page `/-/profile/notifications`. */
export interface NotificationsModule extends ModuleRoutes {
  readonly service: NotificationsService;
  /** Notification e-mails through the outbox; also the alerts module's recipients port. */
  readonly mailer: NotificationMailer;
  /** Queues the reminders of personal tokens expiring within 7 days (the daily job's work; tests call it). */
  remindExpiringTokens(now: number): Promise<number>;
  /** Queues the `issue_due` mails of open issues due the day after `now` (the daily job's work; tests call it). */
  remindDueIssues(now: number): Promise<number>;
}

/**
 * Notification settings and effective-level resolution. Areas that send email (alerts,
 * incidents) ask `service.recipients(projectId, 'new_issue')` and `service.notificationEmails(ids)`.
 */
export function createNotificationsModule(platform: Platform, deps: NotificationsModuleDeps): NotificationsModule {
  const { identity, projects } = deps;
  const service = new NotificationsService(new NotificationsRepository(platform.db), platform.clock, platform.config.tier, {
    users: identity.users,
    projects: projects.projects,
    groups: projects.groups,
    members: projects.members,
  });
  const mailer = new NotificationMailer(platform.mail, service, platform.config.externalUrl, platform.config.secretKeyBase);
  const dispatch = notificationJobs({
    db: platform.db,
    clock: platform.clock,
    jobs: platform.jobs,
    service,
    mailer,
    identity,
    projects,
    externalUrl: platform.config.externalUrl,
  });
  platform.bus.subscribeToChanges(dispatch.onEvent);
  // Account mails (a new personal access token, a changed password) follow the audit trail's record.
  platform.bus.subscribe(['audited'], dispatch.onEvent);
  // A moved project, a sign-in from a new address, a new or regressed error (event-mail.jobs.ts).
  const eventMail = eventMailJobs({
    db: platform.db,
    jobs: platform.jobs,
    service,
    mailer,
    identity,
    projects,
    externalUrl: platform.config.externalUrl,
  });
  platform.bus.subscribeToChanges(eventMail.onEvent);
  return {
    service,
    mailer,
    routes: (app) => notificationsRoutes(app, { service, users: identity.users, lookup: projects.lookup }),
    remindExpiringTokens: dispatch.remindExpiringTokens,
    remindDueIssues: dispatch.remindDueIssues,
    rootRoutes: async (app) => {
      app.addHook('onReady', async () => {
        await dispatch.schedule();
      });
      await unsubscribeRoutes(app, { service, projects, secretKeyBase: platform.config.secretKeyBase });
    },
    pages: (web) => notificationsPages(web, { service, identity, projects, mailEnabled: platform.mail.enabled }),
  };
}
