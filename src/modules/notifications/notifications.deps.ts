import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';

/** What the notifications module is built with. */
export interface NotificationsModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
}
