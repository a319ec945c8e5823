import { ingestionLimits, type ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';
import { collectorRoutes } from './collector.routes.js';
import { settingsRoutes } from './error-tracking.routes.js';
import { errorsRoutes } from './errors.routes.js';
import { ErrorsService } from './errors.service.js';
import { IngestionService } from './ingestion.service.js';
import { EventQuota } from './event-quota.js';
import { errorPagesRoutes } from './pages.routes.js';
import { registerRetentionJob } from './retention.jobs.js';
import { errorPagePath, type ErrorTrackingDeps } from './route-deps.js';
import { SettingsService } from './settings.service.js';

export { RETENTION_JOB } from './retention.jobs.js';
export type { SettingsService } from './settings.service.js';
export type { ErrorsService } from './errors.service.js';
export type { IngestionService } from './ingestion.service.js';

export interface ErrorTrackingModule {
  readonly settings: SettingsService;
  readonly errors: ErrorsService;
  readonly ingestion: IngestionService;
  /** Settings, client keys and errors under `/api/v4`. */
  routes(app: ApiApp): void;
  /** The Sentry collector and the error pages, at the root; schedules retention on start. */
  rootRoutes(app: ApiApp): void;
}

export function createErrorTrackingModule(
  platform: Platform,
  deps: { identity: IdentityModule; projects: ProjectsModule },
): ErrorTrackingModule {
  const { db, clock, config, jobs, limiter } = platform;
  const settings = new SettingsService(db, clock, async (projectId) => (await deps.projects.projects.findById(projectId)) !== undefined);
  const errors = new ErrorsService(
    db,
    clock,
    deps.projects.issues,
    (projectId, errorId) => `${config.externalUrl}${errorPagePath(projectId, errorId)}`,
  );
  const ingestion = new IngestionService(platform.database.transact, clock, new EventQuota(db, clock, config.errorTrackingMaxEvents));
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
  };
  return {
    settings,
    errors,
    ingestion,
    routes: (app) => {
      settingsRoutes(app, routeDeps);
      errorsRoutes(app, routeDeps);
    },
    rootRoutes: (app) => {
      collectorRoutes(app, {
        settings,
        ingestion,
        projects: deps.projects.projects,
        limiter,
        limits: ingestionLimits(config.rateLimits, 'collector'),
      });
      errorPagesRoutes(app, { ...routeDeps, pageAuth: deps.identity.pageAuth });
      app.addHook('onReady', () => retention.schedule());
    },
  };
}
