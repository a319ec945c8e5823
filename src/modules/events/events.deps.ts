import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';

/** What the events module is built with. */
export interface EventsModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
}
