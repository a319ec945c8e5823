import { noRootRoutes, noRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import type { DashboardDeps } from './dashboard.deps.js';
import { dashboardPages } from './dashboard.pages.js';
import { newProjectPages } from './new-project.pages.js';

export type { DashboardDeps } from './dashboard.deps.js';

/**
 * The signed-in person's home: `/` (their projects, groups and recent activity), the header's
 * `/dashboard/projects`, `/dashboard/groups` and `/dashboard/activity`, and `/projects/new`.
 * Pages only, read and written through the projects and events modules' services.
 */
export function createDashboardModule(platform: Platform, deps: DashboardDeps): ModuleRoutes {
  return {
    routes: noRoutes,
    rootRoutes: noRootRoutes,
    pages: (web) => {
      dashboardPages(web, platform, deps);
      newProjectPages(web, platform, deps);
    },
  };
}
