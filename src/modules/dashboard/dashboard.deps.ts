import type { EventsModule } from '../events/index.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';

/** What the dashboard module is built with. */
export interface DashboardDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
  events: EventsModule;
}
