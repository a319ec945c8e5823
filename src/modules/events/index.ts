import type { FastifyInstance } from 'fastify';
import type { ApiApp } from '../../infra/http/index.js';
import { VersionCache } from '../../infra/db/index.js';
import type { Platform } from '../../infra/platform.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';
import { createRecorder } from './events.recorder.js';
import { activityPageRoutes } from './events.page-routes.js';
import { eventsRoutes, type EventsAnswer } from './events.routes.js';
import { EventsService } from './events.service.js';

export { EventsService, parseFilter } from './events.service.js';
export { pushPayloads, commitTitle } from './events.recorder.js';
export { mapEvent } from './events.presenter.js';

/** Time alone can change an answer (a membership expiring): kept answers last this long at most. */
const ANSWER_TTL_MS = 10_000;

export interface EventsModule {
  readonly service: EventsService;
  routes(app: ApiApp): void;
  /** The activity page, `/-/projects/:id/activity`. */
  rootRoutes(app: FastifyInstance): void;
}

export interface EventsModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
}

/**
 * Activity events: recorded from the domain bus in the writer's transaction (so an action and
 * its event commit together) and read through the events API. The git area publishes
 * `push_received`; this module turns it into push events.
 */
export function createEventsModule(platform: Platform, deps: EventsModuleDeps): EventsModule {
  const { identity, projects } = deps;
  platform.bus.subscribe(createRecorder(platform.config.pushEventActivitiesLimit));
  const service = new EventsService(platform.db, projects.access, projects.projects);
  const answers = new VersionCache<EventsAnswer>({
    dataVersion: () => platform.database.dataVersion(),
    clock: platform.clock,
    ttlMs: ANSWER_TTL_MS,
    maxEntries: 1000,
    maxBytes: 32 * 1024 * 1024,
  });
  return {
    service,
    routes: (app) =>
      eventsRoutes(app, { service, users: identity.users, lookup: projects.lookup, externalUrl: platform.config.externalUrl, answers }),
    rootRoutes: (app) => activityPageRoutes(app, { service, identity, projects, externalUrl: platform.config.externalUrl }),
  };
}
