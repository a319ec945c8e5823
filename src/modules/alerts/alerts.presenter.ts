import { toIso, toIsoOrNull } from '../../infra/clock.js';
import type { ProjectRow } from '../projects/index.js';
import type { AlertRow, AlertSettingsRow } from './alerts.repository.js';
import { alertPagePath } from './incidents.service.js';
import type { IntegrationRow } from './integrations.repository.js';
import { readExample, readMappings } from './mappings.rules.js';
import { customFieldsOf, type Severity } from './normalize-common.rules.js';

/** Where an integration receives alerts (SPEC "Alert receiver"; reference A10 for HTTP). */
export function integrationUrl(row: IntegrationRow, project: ProjectRow, externalUrl: string): string {
  if (row.type === 'prometheus') return `${externalUrl}/${project.full_path}/prometheus/alerts/notify.json`;
  const slug =
    row.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || 'http-endpoint';
  return `${externalUrl}/${project.full_path}/alerts/notify/${slug}/${row.endpoint_identifier}.json`;
}

/** The key appears only in the answers to create and reset (DESIGN.md §4). */
export function mapIntegration(row: IntegrationRow, project: ProjectRow, externalUrl: string, token?: string) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    active: row.active === 1,
    endpoint_identifier: row.endpoint_identifier,
    url: integrationUrl(row, project, externalUrl),
    payload_example: readExample(row.payload_example),
    payload_attribute_mappings: readMappings(row.payload_attribute_mappings),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
    ...(token !== undefined ? { token } : {}),
  };
}

export function mapAlert(
  row: AlertRow,
  project: ProjectRow,
  externalUrl: string,
  extras: { integration?: IntegrationRow | undefined; issueIid?: number | null | undefined } = {},
) {
  const integration = extras.integration;
  const payload = JSON.parse(row.payload) as unknown;
  return {
    id: row.id,
    iid: row.iid,
    project_id: row.project_id,
    title: row.title,
    description: row.description,
    status: row.status,
    // Written only through genericSeverity or prometheusSeverity (normalize-*.rules.ts).
    severity: row.severity as Severity,
    service: row.service,
    monitoring_tool: row.monitoring_tool,
    hosts: JSON.parse(row.hosts) as string[],
    started_at: toIso(row.started_at),
    ended_at: toIsoOrNull(row.ended_at),
    event_count: row.events,
    fingerprint: row.fingerprint,
    environment_name: row.environment_name,
    runbook: row.runbook,
    full_query: row.full_query,
    y_label: row.y_label,
    incident_markdown: row.incident_markdown,
    issue_iid: extras.issueIid ?? null,
    issue_id: row.issue_id,
    integration: integration ? { id: integration.id, name: integration.name, type: integration.type } : null,
    custom_fields: customFieldsOf(payload, JSON.parse(row.custom_fields)),
    payload,
    details_url: `${externalUrl}${alertPagePath(project.full_path, row.iid)}`,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function mapSettings(row: Pick<AlertSettingsRow, 'create_issue' | 'auto_close_incident' | 'send_email'>) {
  return {
    create_issue: row.create_issue === 1,
    auto_close_incident: row.auto_close_incident === 1,
    send_email: row.send_email === 1,
  };
}
