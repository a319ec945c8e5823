import { BadRequestError, ForbiddenError } from '../../infra/errors/index.js';
import { enforceIngestionLimits, ingestionLimits, pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { AccessLevel } from '../projects/index.js';
import type { AlertsDeps } from './alerts.deps.js';
import { mapAlert, mapIntegration, mapSettings } from './alerts.presenter.js';
import * as S from './alerts.schemas.js';
import { testPayload } from './test-alert.js';

const list = <T>(value: T | T[] | undefined): T[] | undefined => (value === undefined ? undefined : Array.isArray(value) ? value : [value]);

/**
 * REST routes of DESIGN.md §4 for alert management. Integrations are configured by
 * Maintainer or Owner; test alerts, alert views and status changes need Developer
 * (SPEC "Authentication", role requirements).
 */
export function alertsRoutes(app: ApiApp, deps: AlertsDeps): void {
  const { lookup, integrations, alerts, ingest, platform } = deps;
  const base = platform.config.externalUrl;
  const policy = { auth: 'required' } as const;
  // Creation and reset answer the integration's key.
  const secret = { policy, secret: true };
  const prefix = '/projects/:id/alert_management';

  app.get(
    `${prefix}/integrations`,
    { schema: { params: S.ProjectParams, querystring: S.ListIntegrationsQuery }, config: { policy } },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const page = pageOf(request.query);
      const { rows, total } = await integrations.listPage(project, page);
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((row) => mapIntegration(row, project, base));
    },
  );

  app.post(
    `${prefix}/integrations`,
    { schema: { params: S.ProjectParams, body: S.CreateIntegrationBody }, config: secret },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const { row, token } = await integrations.create(project, request.body);
      return reply.code(201).send(mapIntegration(row, project, base, token));
    },
  );

  app.get(`${prefix}/integrations/:integration_id`, { schema: { params: S.IntegrationParams }, config: { policy } }, async (request) => {
    const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
    return mapIntegration(await integrations.get(project, request.params.integration_id), project, base);
  });

  app.put(
    `${prefix}/integrations/:integration_id`,
    { schema: { params: S.IntegrationParams, body: S.UpdateIntegrationBody }, config: { policy } },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return mapIntegration(await integrations.update(project, request.params.integration_id, request.body), project, base);
    },
  );

  app.delete(
    `${prefix}/integrations/:integration_id`,
    { schema: { params: S.IntegrationParams }, config: { policy } },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      await integrations.remove(project, request.params.integration_id);
      return reply.code(204).send();
    },
  );

  app.post(
    `${prefix}/integrations/:integration_id/reset_token`,
    { schema: { params: S.IntegrationParams }, config: secret },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const { row, token } = await integrations.resetToken(project, request.params.integration_id);
      return mapIntegration(row, project, base, token);
    },
  );

  // The body is the alert payload itself; empty sends the integration's sample (SPEC "Alert receiver").
  app.post(
    `${prefix}/integrations/:integration_id/test`,
    { schema: { params: S.IntegrationParams }, config: { policy } },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      const integration = await integrations.get(project, request.params.integration_id);
      if (integration.active !== 1) throw new ForbiddenError('The integration is not active');
      // A test alert is an alert: it counts under the receiver's limits.
      const limits = ingestionLimits(platform.config.rateLimits, 'alerts');
      await enforceIngestionLimits(platform.limiter, 'alerts', limits, { address: request.ip, credential: integration.id }, project.id);
      return ingest.ingest(project, integration, testPayload(integration, request.body, platform.clock.now()));
    },
  );

  app.get(`${prefix}/settings`, { schema: { params: S.ProjectParams }, config: { policy } }, async (request) => {
    const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
    return mapSettings(await alerts.settings(project));
  });

  app.put(`${prefix}/settings`, { schema: { params: S.ProjectParams, body: S.SettingsBody }, config: { policy } }, async (request) => {
    const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
    return mapSettings(await alerts.updateSettings(project, request.body));
  });

  app.get(
    `${prefix}/alerts`,
    { schema: { params: S.ProjectParams, querystring: S.ListAlertsQuery }, config: { policy } },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      const q = request.query;
      const page = pageOf(q);
      const { rows, total } = await alerts.list(
        project,
        {
          statuses: list(q.status) ?? q['status[]'],
          severities: list(q.severity) ?? q['severity[]'],
          search: q.search,
          sort: q.sort ?? 'created_at_desc',
        },
        page,
      );
      const byId = await integrations.mapByIds(rows.flatMap((r) => (r.integration_id === null ? [] : [r.integration_id])));
      setPaginationHeaders(request, reply, page, total, base);
      return rows.map((r) => mapAlert(r, project, base, { integration: r.integration_id ? byId.get(r.integration_id) : undefined }));
    },
  );

  app.get(`${prefix}/alerts/:alert_iid`, { schema: { params: S.AlertParams }, config: { policy } }, async (request) => {
    const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
    const alert = await alerts.get(project, request.params.alert_iid);
    return deps.present(alert, project);
  });

  app.put(
    `${prefix}/alerts/:alert_iid`,
    { schema: { params: S.AlertParams, body: S.UpdateAlertBody }, config: { policy } },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      if (!request.body.status) throw new BadRequestError('Please provide attributes to update');
      const alert = await alerts.updateStatus(project, request.params.alert_iid, request.body.status);
      return deps.present(alert, project);
    },
  );
}
