import type { Actor } from '../../infra/auth/index.js';
import type { Platform } from '../../infra/platform.js';
import type { Crumb } from '../../web/index.js';
import type { ProjectLookup, ProjectRow, ProjectsService } from '../projects/index.js';
import type { AlertRow } from './alerts.repository.js';
import type { AlertsService } from './alerts.service.js';
import type { IngestService } from './ingest.service.js';
import type { IntegrationsService } from './integrations.service.js';
import type { ReceiverTargets } from './targets.service.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';
import type { AlertRecipients } from './ingest.service.js';
import type { Person } from './alerts.views.js';

/** What the alerts routes and pages are built with. */
export interface AlertsDeps {
  platform: Platform;
  lookup: ProjectLookup;
  projects: ProjectsService;
  integrations: IntegrationsService;
  alerts: AlertsService;
  ingest: IngestService;
  targets: ReceiverTargets;
  /** The breadcrumbs above a project's pages: its namespace, linked where the viewer may see it. */
  trail(project: ProjectRow, viewer: Actor | null, scope?: object): Promise<Crumb[]>;
  /** What other modules add to Settings > Monitor, after the alert integrations. */
  settingsSections: readonly MonitorSettingsSection[];
  /** The people an alert's page names (activity authors, its assignee) and may assign it to. */
  people: {
    byIds(ids: readonly number[]): Promise<Map<number, Person>>;
    /** The project's members, inherited ones included, who may see alerts (Developer and above). */
    assignable(project: ProjectRow): Promise<Person[]>;
  };
  /** One alert as the API shows it (with its integration and incident). */
  present(alert: AlertRow, project: ProjectRow): Promise<ReturnType<typeof import('./alerts.presenter.js').mapAlert>>;
}

/**
 * Another module's section of Settings > Monitor (error tracking's, from its index.ts): its
 * data for a project, drawn with the page's CSRF token; its forms post to its own routes.
 */
export interface MonitorSettingsSection<T = unknown> {
  data(project: ProjectRow): Promise<T>;
  render(project: ProjectRow, data: T, csrf: string): preact.VNode;
}

/** What the alerts module is built with. */
export interface AlertsModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
  /** Who receives alert emails: the notifications module's settings. */
  recipients: AlertRecipients;
  /** Sections other modules add to Settings > Monitor (the page lives here, with the alert integrations). */
  settingsSections: readonly MonitorSettingsSection[];
}
