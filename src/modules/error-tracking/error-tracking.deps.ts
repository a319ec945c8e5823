import type { Platform } from '../../infra/platform.js';
import type { UsersService } from '../identity/index.js';
import type { IssuesService, ProjectLookup, ProjectsService } from '../projects/index.js';
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
}

/** Where the error page of an error lives (pages sit under `/-/`, which no project path can take). */
export const errorPagePath = (projectId: number, errorId?: number): string =>
  `/-/projects/${projectId}/errors${errorId === undefined ? '' : `/${errorId}`}`;

/** What the error-tracking module is built with. */
export interface ErrorTrackingModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
}
