import { ingestionLimits } from '../../infra/http/index.js';
import { AccessLevel } from '../projects/index.js';
import type { ModuleRoutes, Platform } from '../../infra/platform.js';
import { collectorRoutes } from './collector.routes.js';
import { settingsRoutes } from './error-tracking.routes.js';
import { errorsRoutes } from './errors.routes.js';
import { ErrorsRepository } from './errors.repository.js';
import { ErrorsService } from './errors.service.js';
import { IngestionRepository } from './ingestion.repository.js';
import { IngestionService } from './ingestion.service.js';
import { EventQuota } from './event-quota.service.js';
import { errorPagesRoutes } from './pages.routes.js';
import { registerRetentionJob } from './retention.jobs.js';
import { errorPagePath, type ErrorTrackingDeps, type ErrorTrackingModuleDeps } from './error-tracking.deps.js';
import { SettingsRepository } from './settings.repository.js';
import { SettingsService } from './settings.service.js';
import { errorTrackingSettingsSection, type ErrorTrackingSettingsSection } from './settings-section.views.js';
import { ERROR_TRACKING_EPOCH_TABLES } from './error-tracking.epochs.js';

export { RETENTION_JOB } from './retention.jobs.js';
export { errorPagePath } from './error-tracking.deps.js';
export type { ErrorTrackingModuleDeps } from './error-tracking.deps.js';
export type { SettingsService } from './settings.service.js';
export type { ErrorsService } from './errors.service.js';
export type { IngestionService } from './ingestion.service.js';
export type { ErrorTrackingSettingsSection } from './settings-section.views.js';

/**
 * Settings, client keys and errors under `/api/v4`; the Sentry collector at the root, which also
 * schedules retention on start; the error pages on the page layer.
 */
export interface ErrorTrackingModule extends ModuleRoutes {
  readonly settings: SettingsService;
  readonly errors: ErrorsService;
  readonly ingestion: IngestionService;
  /** Its part of Settings > Monitor, a page the alerts module draws. */
  readonly settingsSection: ErrorTrackingSettingsSection;
}

export function createErrorTrackingModule(platform: Platform, deps: ErrorTrackingModuleDeps): ErrorTrackingModule {
  // Writes to these tables bump the epoch wherever they are made (infra/db/epoch-bumps.ts).
  platform.database.epochs.declare('error-tracking', ERROR_TRACKING_EPOCH_TABLES);
  const { db, clock, config, jobs, limiter } = platform;
  const settings = new SettingsService(
    db,
    new SettingsRepository(db),
    clock,
    async (projectId) => (await deps.projects.projects.findById(projectId)) !== undefined,
    platform.bus,
  );
  const errors = new ErrorsService(
    db,
    new ErrorsRepository(db),
    clock,
    deps.projects.issues,
    (project, errorId) => `${config.externalUrl}${errorPagePath(project.full_path, errorId)}`,
  );
  // The issue opened from an error links back to it (the error pages need Reporter), and a
  // project's Maintainers are offered to set error tracking up until it is on.
  deps.projects.pageExtensions.registerIssueOrigin(async (issue, project, level) => {
    const error = await errors.findByIssue(project.id, issue.iid);
    if (!error) return null;
    return { label: `error ${error.title}`, href: level >= AccessLevel.REPORTER ? errorPagePath(project.full_path, error.id) : null };
  });
  deps.projects.pageExtensions.registerOverviewHint(async (project, level) => {
    if (level < AccessLevel.MAINTAINER || (await settings.find(project.id))?.active === 1) return null;
    return {
      title: 'Set up error tracking',
      text: 'Send errors from your application with a Sentry SDK: they are grouped here, and an issue can be opened from each.',
      action: { href: `/${project.full_path}/-/settings/operations`, label: 'Set up error tracking' },
    };
  });
  const ingestion = new IngestionService(
    platform.database.transact,
    new IngestionRepository(db),
    clock,
    new EventQuota(db, clock, config.errorTrackingMaxEvents),
    // A new or regressed error (never a repeat event) reads the project's mail setting and, when
    // it is on, tells the notifications module in the same transaction (issue 23). Without mail
    // configured it costs nothing.
    async (trx, error) => {
      if (!platform.mail.enabled || !(await new SettingsRepository(trx).emailNotifications(error.projectId))) return;
      await platform.bus.publish({ type: 'error_reported', ...error }, trx);
    },
  );
  const retention = registerRetentionJob(db, jobs, clock, config.errorTrackingRetentionDays);
  const routeDeps: ErrorTrackingDeps = {
    platform,
    lookup: deps.projects.lookup,
    projects: deps.projects.projects,
    issues: deps.projects.issues,
    users: deps.identity.users,
    settings,
    errors,
    ingestion,
    trail: (project, viewer, scope) => deps.projects.trails.of(project, viewer, scope),
  };
  return {
    settings,
    errors,
    ingestion,
    settingsSection: errorTrackingSettingsSection(settings, config.externalUrl),
    routes: (app) => {
      settingsRoutes(app, routeDeps);
      errorsRoutes(app, routeDeps);
    },
    rootRoutes: async (app) => {
      collectorRoutes(app, {
        settings,
        ingestion,
        projects: deps.projects.projects,
        limiter,
        limits: ingestionLimits(config.rateLimits, 'collector'),
        counted: (result) => platform.metrics.increment('basalt_error_events_ingested_total', { result }),
      });
      app.addHook('onReady', () => retention.schedule());
    },
    pages: (web) => errorPagesRoutes(web, routeDeps),
  };
}
