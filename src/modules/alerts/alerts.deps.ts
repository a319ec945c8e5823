import type { Platform } from '../../infra/platform.js';
import type { PageAuth } from '../identity/index.js';
import type { ProjectLookup, ProjectRow, ProjectsService } from '../projects/index.js';
import type { AlertRow } from './alerts.repository.js';
import type { AlertsService } from './alerts.service.js';
import type { IngestService } from './ingest.service.js';
import type { IntegrationsService } from './integrations.service.js';
import type { ReceiverTargets } from './targets.js';
import type { IdentityModule } from '../identity/index.js';
import type { ProjectsModule } from '../projects/index.js';
import type { AlertRecipients } from './ingest.service.js';

/** What the alerts routes and pages are built with. */
export interface AlertsDeps {
  platform: Platform;
  lookup: ProjectLookup;
  pageAuth: PageAuth;
  projects: ProjectsService;
  integrations: IntegrationsService;
  alerts: AlertsService;
  ingest: IngestService;
  targets: ReceiverTargets;
  /** One alert as the API shows it (with its integration and incident). */
  present(alert: AlertRow, project: ProjectRow): Promise<ReturnType<typeof import('./alerts.presenter.js').mapAlert>>;
}

/** What the alerts module is built with. */
export interface AlertsModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
  /** Who receives alert emails: the notifications module's settings. */
  recipients: AlertRecipients;
}
