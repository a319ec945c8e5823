import { VersionCache } from '../../infra/db/index.js';
import { noRootRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import type { EventsModuleDeps } from './events.deps.js';
import { createRecorder } from './events.recorder.js';
import { EventsRepository } from './events.repository.js';
import { activityPages } from './events.page-routes.js';
import { eventsRoutes, type EventsAnswer } from './events.routes.js';
import { EventsService } from './events.service.js';

export { EventsService, parseFilter } from './events.service.js';
export type { EventsModuleDeps } from './events.deps.js';
export { pushPayloads, commitTitle } from './events.recorder.js';
export { mapEvent } from './events.presenter.js';
export { activityContext, activityItems, activityPath } from './events.page-routes.js';
export { ActivityList, NoActivity, type ActivityItem } from './events.pages.js';

/** Time alone can change an answer (a membership expiring): kept answers last this long at most. */
const ANSWER_TTL_MS = 10_000;

/** The events API, and a project's activity page `/<full_path>/-/activity`. */
export interface EventsModule extends ModuleRoutes {
  readonly service: EventsService;
}

/**
 * Activity events: recorded from the domain bus in the writer's transaction (so an action and
 * its event commit together) and read through the events API. The git area publishes
 * `push_received`; this module turns it into push events.
 */
export function createEventsModule(platform: Platform, deps: EventsModuleDeps): EventsModule {
  const { identity, projects } = deps;
  const rows = new EventsRepository(platform.db);
  platform.bus.subscribeToChanges(createRecorder(rows, platform.config.pushEventActivitiesLimit));
  const service = new EventsService(rows, projects.access, projects.projects);
  const answers = new VersionCache<EventsAnswer>({
    dataVersion: (scope) => platform.database.dataVersion(scope),
    clock: platform.clock,
    ttlMs: ANSWER_TTL_MS,
    maxEntries: 1000,
    maxBytes: 32 * 1024 * 1024,
  });
  return {
    service,
    routes: (app) =>
      eventsRoutes(app, { service, users: identity.users, lookup: projects.lookup, externalUrl: platform.config.externalUrl, answers }),
    rootRoutes: noRootRoutes,
    pages: (web) => activityPages(web, { service, identity, projects, externalUrl: platform.config.externalUrl }),
  };
}
