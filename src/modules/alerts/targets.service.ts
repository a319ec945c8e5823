import type { Clock } from '../../infra/clock.js';
import { EpochCache, type Database } from '../../infra/db/index.js';
import type { ProjectRow, ProjectsService } from '../projects/index.js';
import type { AlertsRepository, AlertSettingsRow } from './alerts.repository.js';
import { DEFAULT_SETTINGS } from './ingest.service.js';
import type { IntegrationRow, IntegrationType } from './integrations.repository.js';
import type { IntegrationsService } from './integrations.service.js';

export type AlertSettings = Pick<AlertSettingsRow, 'create_issue' | 'auto_close_incident' | 'send_email'>;

/** What a receiver URL resolves to: the project, its integration for the URL, the project's alert settings. */
export interface ReceiverTarget {
  project: ProjectRow;
  /** Undefined when the URL names no integration of the project. */
  integration: IntegrationRow | undefined;
  settings: AlertSettings;
}

/**
 * Resolves receiver URLs, keeping resolved active integrations between requests: a monitoring
 * tool posts to the same URL again and again, and the three reads are a good part of a
 * grouped alert's cost. Kept while the `projects` and `alerts` cache epochs hold (every write
 * to projects, integrations and alert settings bumps one), 10 s at most. The key is checked
 * against the integration on every request.
 */
export class ReceiverTargets {
  private readonly cache: EpochCache<ReceiverTarget | undefined>;

  constructor(
    db: Database,
    private readonly alerts: AlertsRepository,
    clock: Clock,
    private readonly projects: ProjectsService,
    private readonly integrations: IntegrationsService,
  ) {
    this.cache = new EpochCache({ db, epochs: ['projects', 'alerts'], clock, ttlMs: 10_000, maxEntries: 10_000 });
  }

  /** The target of `/<path>/alerts/notify/<name>/<endpoint>` (http) or `/<path>/prometheus/…` (endpoint null). */
  find(path: string, kind: IntegrationType, endpoint: string | null): Promise<ReceiverTarget | undefined> {
    return this.cache.through(
      `${kind} ${path} ${endpoint ?? ''}`,
      () => this.read(path, kind, endpoint),
      // Only a usable target is kept: refusals read again each time.
      (target) => target?.integration?.active === 1,
    );
  }

  private async read(path: string, kind: IntegrationType, endpoint: string | null): Promise<ReceiverTarget | undefined> {
    const project = await this.projects.findByFullPath(path);
    if (!project) return undefined;
    const [integration, settings] = await Promise.all([
      this.integrations.findForEndpoint(project, kind, endpoint),
      this.alerts.findSettings(project.id),
    ]);
    return { project, integration, settings: settings ?? DEFAULT_SETTINGS };
  }
}
