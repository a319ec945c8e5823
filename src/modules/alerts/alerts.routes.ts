import { Type } from '@sinclair/typebox';
import { BadRequestError, ForbiddenError } from '../../infra/errors/index.js';
import { enforceIngestionLimits, ingestionLimits, pageOf, setPaginationHeaders, type ApiApp } from '../../infra/http/index.js';
import { AccessLevel } from '../projects/index.js';
import type { AlertsDeps } from './alerts.deps.js';
import { mapAlert, mapIntegration, mapSettings } from './alerts.presenter.js';
import * as S from './alerts.schemas.js';
import { testPayload } from './test-alert.rules.js';

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
  const tags = ['alerts'];

  app.get(
    `${prefix}/integrations`,
    {
      schema: {
        summary: "Lists the project's alert integrations",
        tags,
        params: S.ProjectParams,
        querystring: S.ListIntegrationsQuery,
        response: { 200: S.IntegrationList },
      },
      config: { policy },
    },
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
    {
      schema: {
        summary: 'Creates an alert integration and answers its key',
        tags,
        params: S.ProjectParams,
        body: S.CreateIntegrationBody,
        response: { 201: S.Integration },
      },
      config: secret,
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const { row, token } = await integrations.create(project, request.body, request.actor);
      return reply.code(201).send(mapIntegration(row, project, base, token));
    },
  );

  app.get(
    `${prefix}/integrations/:integration_id`,
    {
      schema: { summary: 'Shows an alert integration', tags, params: S.IntegrationParams, response: { 200: S.Integration } },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return mapIntegration(await integrations.get(project, request.params.integration_id), project, base);
    },
  );

  app.put(
    `${prefix}/integrations/:integration_id`,
    {
      schema: {
        summary: 'Updates an alert integration',
        tags,
        params: S.IntegrationParams,
        body: S.UpdateIntegrationBody,
        response: { 200: S.Integration },
      },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return mapIntegration(await integrations.update(project, request.params.integration_id, request.body, request.actor), project, base);
    },
  );

  app.delete(
    `${prefix}/integrations/:integration_id`,
    {
      schema: { summary: 'Deletes an alert integration', tags, params: S.IntegrationParams, response: { 204: Type.Null() } },
      config: { policy },
    },
    async (request, reply) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      await integrations.remove(project, request.params.integration_id, request.actor);
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${prefix}/integrations/:integration_id/reset_token`,
    {
      schema: {
        summary: "Replaces an integration's key and answers the new one",
        operationId: 'resetProjectAlertManagementIntegrationToken',
        tags,
        params: S.IntegrationParams,
        response: { 200: S.Integration },
      },
      config: secret,
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      const { row, token } = await integrations.resetToken(project, request.params.integration_id, request.actor);
      return mapIntegration(row, project, base, token);
    },
  );

  // The body is the alert payload itself; empty sends the integration's sample (SPEC "Alert receiver").
  app.post(
    `${prefix}/integrations/:integration_id/test`,
    {
      schema: {
        summary: "Sends a test alert (the body, else the integration's sample) through the integration",
        tags,
        params: S.IntegrationParams,
        response: { 200: S.AlertSummaries },
      },
      config: { policy },
    },
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

  app.get(
    `${prefix}/settings`,
    {
      schema: { summary: "Shows the project's alert settings", tags, params: S.ProjectParams, response: { 200: S.Settings } },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return mapSettings(await alerts.settings(project));
    },
  );

  app.put(
    `${prefix}/settings`,
    {
      schema: {
        summary: "Updates the project's alert settings",
        tags,
        params: S.ProjectParams,
        body: S.SettingsBody,
        response: { 200: S.Settings },
      },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.MAINTAINER);
      return mapSettings(await alerts.updateSettings(project, request.body));
    },
  );

  app.get(
    `${prefix}/alerts`,
    {
      schema: {
        summary: "Lists the project's alerts",
        tags,
        params: S.ProjectParams,
        querystring: S.ListAlertsQuery,
        response: { 200: S.AlertList },
      },
      config: { policy },
    },
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

  app.get(
    `${prefix}/alerts/:alert_iid`,
    { schema: { summary: 'Shows an alert', tags, params: S.AlertParams, response: { 200: S.Alert } }, config: { policy } },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      const alert = await alerts.get(project, request.params.alert_iid);
      return deps.present(alert, project);
    },
  );

  app.put(
    `${prefix}/alerts/:alert_iid`,
    {
      schema: { summary: "Changes an alert's status", tags, params: S.AlertParams, body: S.UpdateAlertBody, response: { 200: S.Alert } },
      config: { policy },
    },
    async (request) => {
      const { project } = await lookup.project(request, request.params.id, AccessLevel.DEVELOPER);
      if (!request.body.status) throw new BadRequestError('Please provide attributes to update');
      const alert = await alerts.updateStatus(project, request.params.alert_iid, request.body.status, request.actor?.user.id ?? null);
      return deps.present(alert, project);
    },
  );
}
