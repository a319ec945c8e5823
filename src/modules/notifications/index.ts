import type { FastifyInstance } from 'fastify';
import type { ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';
import { notificationsPageRoutes } from './notifications.page-routes.js';
import { notificationsRoutes } from './notifications.routes.js';
import { NotificationsService } from './notifications.service.js';

export { NotificationsService } from './notifications.service.js';
export type { SettingView, GlobalSettingView } from './notifications.service.js';
export type { Participation } from './notifications.rules.js';
export { LEVELS, ALL_EVENTS, type Level, type NotificationEvent } from './notifications.levels.js';

export interface NotificationsModule {
  readonly service: NotificationsService;
  routes(app: ApiApp): void;
  /** The settings page, `/-/profile/notifications`. */
  rootRoutes(app: FastifyInstance): void;
}

export interface NotificationsModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
}

/**
 * Notification settings and effective-level resolution. Areas that send email (alerts,
 * incidents) ask `service.recipients(projectId, 'new_issue')` and `service.notificationEmails(ids)`.
 */
export function createNotificationsModule(platform: Platform, deps: NotificationsModuleDeps): NotificationsModule {
  const { identity, projects } = deps;
  const service = new NotificationsService(platform.db, platform.clock, platform.config.tier, {
    users: identity.users,
    projects: projects.projects,
    groups: projects.groups,
    members: projects.members,
  });
  return {
    service,
    routes: (app) => notificationsRoutes(app, { service, users: identity.users, lookup: projects.lookup }),
    rootRoutes: (app) => notificationsPageRoutes(app, { service, identity, projects }),
  };
}
