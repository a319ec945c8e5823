import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';

/** What the git module is built with. */
export interface GitModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
}
