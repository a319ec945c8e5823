import type { Actor } from '../../infra/auth/index.js';
import type { Platform } from '../../infra/platform.js';
import type { Crumb } from '../../web/index.js';
import type { UsersService } from '../identity/index.js';
import type { IssuesService, ProjectLookup, ProjectRow, ProjectsService } from '../projects/index.js';
import type { ErrorsService } from './errors.service.js';
import type { IngestionService } from './ingestion.service.js';
import type { SettingsService } from './settings.service.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';

export interface ErrorTrackingDeps {
  platform: Platform;
  lookup: ProjectLookup;
  projects: ProjectsService;
  issues: IssuesService;
  users: UsersService;
  settings: SettingsService;
  errors: ErrorsService;
  ingestion: IngestionService;
  /** The breadcrumbs above a project's pages: its namespace, linked where the viewer may see it. */
  trail(project: ProjectRow, viewer: Actor | null, scope?: object): Promise<Crumb[]>;
}

/** The error list, or one error's page, at the established product's address (`/<full_path>/-/error_tracking`). */
export const errorPagePath = (fullPath: string, errorId?: number): string =>
  `/${fullPath}/-/error_tracking${errorId === undefined ? '' : `/${errorId}/details`}`;

/** Settings > Monitor, where error tracking is switched on and its DSN shown (the alerts module draws the page). */
export const monitorSettingsPath = (fullPath: string): string => `/${fullPath}/-/settings/operations`;

/** What the error-tracking module is built with. */
export interface ErrorTrackingModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
}
