import { noRootRoutes, noRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import type { AdminModuleDeps } from './admin.deps.js';
import { overviewPages } from './overview.pages.js';
import { storagePages } from './storages.pages.js';
import { userPages } from './users.pages.js';
import { applicationsFrame } from './admin.views.js';

export type { AdminModuleDeps } from './admin.deps.js';

export type AdminModule = ModuleRoutes;

/**
 * The admin area (`/admin`): pages only, for administrators, over the services the other
 * modules export — users, instance-wide OAuth applications (the OAuth module's pages in this
 * area's frame), repository storages and system information. Its API counterparts
 * live in the modules that own the data.
 */
export function createAdminModule(platform: Platform, deps: AdminModuleDeps): AdminModule {
  const pageDeps = { ...deps, platform };
  return {
    routes: noRoutes,
    rootRoutes: noRootRoutes,
    pages: (web) => {
      overviewPages(web, pageDeps);
      userPages(web, pageDeps);
      storagePages(web, pageDeps);
      deps.oauth.instanceApplicationPages(web, applicationsFrame);
    },
  };
}
