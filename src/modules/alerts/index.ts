import type { ModuleRoutes, Platform } from '../../infra/platform.js';
import { AccessLevel, type ProjectRow } from '../projects/index.js';
import type { AlertsDeps, AlertsModuleDeps } from './alerts.deps.js';
import { alertsPages } from './alerts.pages.js';
import { mapAlert } from './alerts.presenter.js';
import { AlertsRepository, type AlertRow } from './alerts.repository.js';
import { alertsRoutes } from './alerts.routes.js';
import { AlertsService } from './alerts.service.js';
import { Incidents, alertPagePath } from './incidents.service.js';
import { ReceiverTargets } from './targets.service.js';
import { ALERT_MAIL_KIND, IngestService } from './ingest.service.js';
import { AlertMailExpansion } from './alert-mail.service.js';
import { IntegrationsRepository } from './integrations.repository.js';
import { IntegrationsService } from './integrations.service.js';
import { notifyRoutes } from './notify.routes.js';
import { maintainerIds } from './recipients.service.js';
import { ALERTS_EPOCH_TABLES } from './alerts.epochs.js';
import { AlertActivityRepository } from './activity.repository.js';

export type { AlertRecipients, AlertSummary } from './ingest.service.js';
export type { AlertsModuleDeps, MonitorSettingsSection } from './alerts.deps.js';
export type { AlertRow } from './alerts.repository.js';
export type { IntegrationRow } from './integrations.repository.js';
export { AlertsService } from './alerts.service.js';
export { IntegrationsService } from './integrations.service.js';
export { IngestService } from './ingest.service.js';

/** The most members an alert's assignee select lists. */
const ASSIGNABLE_SHOWN = 100;

/** Alerts under `/api/v4`; the notify endpoints at the root; the alert pages and Settings > Monitor on the page layer. */
export interface AlertsModule extends ModuleRoutes {
  readonly integrations: IntegrationsService;
  readonly alerts: AlertsService;
  readonly ingest: IngestService;
}

export function createAlertsModule(platform: Platform, deps: AlertsModuleDeps): AlertsModule {
  // Writes to these tables bump the epoch wherever they are made (infra/db/epoch-bumps.ts).
  platform.database.epochs.declare('alerts', ALERTS_EPOCH_TABLES);
  const { db, clock, config } = platform;
  const alertRows = new AlertsRepository(db);
  const incidents = new Incidents(deps.identity.internalUsers, deps.projects.issues, alertRows, config.externalUrl);
  const integrations = new IntegrationsService(new IntegrationsRepository(db), clock, config.tier, db, platform.bus);
  const activity = new AlertActivityRepository(db);
  const alerts = new AlertsService(alertRows, clock, activity, incidents, (work) => db.transaction().execute(work));
  const ingest = new IngestService(
    db,
    alertRows,
    platform.database.transact,
    clock,
    config.tier,
    deps.projects.projects,
    incidents,
    () => deps.recipients,
    (executor, item) => platform.outbox.enqueuePart(executor, ALERT_MAIL_KIND, item),
  );
  // Alert mail: one item per ingest commit (its alerts as parts), its e-mails made by the outbox job.
  const alertMail = new AlertMailExpansion(
    db,
    config.externalUrl,
    () => deps.recipients,
    (id) => deps.projects.projects.findById(id),
    (project) => maintainerIds(deps.projects, project, clock.now()),
  );
  platform.outbox.register(ALERT_MAIL_KIND, { send: (item) => alertMail.send(item) });

  // An incident's issue page links the alert it was opened for (the alert pages need Developer).
  deps.projects.pageExtensions.registerIssueOrigin(async (issue, project, level) => {
    const alert = await alerts.findByIssue(project, issue.id);
    if (!alert) return null;
    return {
      label: `alert ^${alert.iid}: ${alert.title}`,
      href: level >= AccessLevel.DEVELOPER ? alertPagePath(project.full_path, alert.iid) : null,
    };
  });

  const targets = new ReceiverTargets(db, alertRows, clock, deps.projects.projects, integrations);

  const present = async (alert: AlertRow, project: ProjectRow) => {
    const [byId, issue] = await Promise.all([
      integrations.mapByIds(alert.integration_id === null ? [] : [alert.integration_id]),
      alert.issue_id === null ? undefined : deps.projects.issues.findById(alert.issue_id),
    ]);
    return mapAlert(alert, project, config.externalUrl, {
      integration: alert.integration_id === null ? undefined : byId.get(alert.integration_id),
      issueIid: issue?.iid ?? null,
    });
  };
  const routeDeps: AlertsDeps = {
    platform,
    lookup: deps.projects.lookup,
    projects: deps.projects.projects,
    integrations,
    alerts,
    ingest,
    targets,
    present,
    settingsSections: deps.settingsSections,
    people: {
      byIds: async (ids) => {
        const rows = await deps.identity.users.mapByIds(ids);
        return new Map([...rows].map(([id, u]) => [id, { id, username: u.username, name: u.name }]));
      },
      assignable: async (project) => {
        const ancestry = await deps.projects.projects.ancestry(project);
        const { rows } = await deps.projects.members.listEffective(
          { kind: 'project', id: project.id },
          ancestry.map((n) => n.id),
          ASSIGNABLE_SHOWN,
          0,
        );
        const now = clock.now();
        const ids = rows
          .filter((m) => m.access_level >= AccessLevel.DEVELOPER && (m.expires_at === null || m.expires_at > now))
          .map((m) => m.user_id);
        // A personal project's owner is its namespace's, not a member row.
        const namespace = ancestry[ancestry.length - 1];
        if (namespace?.kind === 'user' && namespace.owner_id !== null && !ids.includes(namespace.owner_id)) ids.unshift(namespace.owner_id);
        const users = await deps.identity.users.mapByIds(ids);
        return ids.flatMap((id) => {
          const u = users.get(id);
          return u && u.state === 'active' ? [{ id: u.id, username: u.username, name: u.name }] : [];
        });
      },
    },
    trail: (project, viewer, scope) => deps.projects.trails.of(project, viewer, scope),
  };

  return {
    integrations,
    alerts,
    ingest,
    routes: (app) => alertsRoutes(app, routeDeps),
    rootRoutes: async (app) => {
      await notifyRoutes(app, routeDeps);
    },
    pages: (web) => alertsPages(web, routeDeps),
  };
}
