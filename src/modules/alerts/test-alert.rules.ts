import type { IntegrationRow } from './integrations.repository.js';
import { mappedDocument, readExample, readMappings } from './mappings.rules.js';
import { isObject } from './normalize-common.rules.js';

/** What a test alert sends when neither the caller nor the integration gives a payload. */
export function defaultTestPayload(integration: IntegrationRow, now: number): Record<string, unknown> {
  if (integration.type === 'prometheus') {
    const startsAt = new Date(now).toISOString();
    return {
      version: '4',
      groupKey: '{}:{alertname="BasaltTestAlert"}',
      status: 'firing',
      receiver: 'basalt',
      groupLabels: { alertname: 'BasaltTestAlert' },
      commonLabels: { alertname: 'BasaltTestAlert', severity: 'info' },
      commonAnnotations: { title: 'Test alert' },
      externalURL: 'http://alertmanager.invalid',
      alerts: [
        {
          status: 'firing',
          labels: { alertname: 'BasaltTestAlert', severity: 'info' },
          annotations: { title: 'Test alert', description: 'Sent from the integration settings to check the endpoint.' },
          startsAt,
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: 'http://prometheus.invalid/graph?g0.expr=vector(1)',
        },
      ],
    };
  }
  return {
    title: 'Test alert',
    description: 'Sent from the integration settings to check the endpoint.',
    severity: 'info',
    monitoring_tool: 'Basalt',
  };
}

/**
 * The payload of a test alert (SPEC "Alert receiver"): the caller's JSON, else the
 * integration's sample; Prometheus integrations take the whole payload, a custom-mapping
 * sample only the first item of its `alerts`.
 */
export function testPayload(integration: IntegrationRow, body: unknown, now = Date.now()): unknown {
  const given = isObject(body) && Object.keys(body).length > 0 ? body : null;
  const payload = given ?? readExample(integration.payload_example) ?? defaultTestPayload(integration, now);
  if (integration.type === 'http' && readMappings(integration.payload_attribute_mappings).length > 0) return mappedDocument(payload);
  return payload;
}
