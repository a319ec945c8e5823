import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';

export interface CreatedIntegration {
  id: number;
  url: string;
  token: string;
  type: string;
  endpoint_identifier: string;
}

/** Creates an integration through the API (root's token unless given). */
export async function createIntegration(
  t: TestApp,
  projectId: number,
  body: Record<string, unknown> = { name: 'Monitoring' },
  token?: string,
): Promise<CreatedIntegration> {
  const res = await t.api('POST', `/projects/${projectId}/alert_management/integrations`, { body, ...(token ? { token } : {}) });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** The path part of an integration URL (the app is injected, not listening). */
export const pathOf = (url: string): string => new URL(url).pathname;

/** Posts a payload to a notify URL as a monitoring tool would. */
export function notify(
  t: TestApp,
  url: string,
  payload: unknown,
  options: { key?: string | null; headers?: Record<string, string>; raw?: string } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  return t.app.inject({ method: 'POST', url: pathOf(url), headers, payload: options.raw ?? JSON.stringify(payload) });
}

/** An Alertmanager webhook body (version 4) around the given alert items. */
export function alertmanagerPayload(alerts: Record<string, unknown>[], status = 'firing'): Record<string, unknown> {
  return {
    version: '4',
    groupKey: '{}:{alertname="HighLatency"}',
    truncatedAlerts: 0,
    status,
    receiver: 'basalt',
    groupLabels: { alertname: 'HighLatency' },
    commonLabels: { alertname: 'HighLatency' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager.test:9093',
    alerts,
  };
}

export function prometheusItem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    status: 'firing',
    labels: { alertname: 'HighLatency', severity: 'warning', service_environment_name: 'production' },
    annotations: { summary: 'Latency is high', description: 'p99 over 1s', runbook: 'https://runbooks.test/latency', dashboard: 'latency' },
    startsAt: '2026-01-01T10:00:00Z',
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus.test:9090/graph?g0.expr=histogram_quantile%280.99%2C+rate%28x%5B5m%5D%29%29+%3E+1&g0.tab=1',
    fingerprint: 'abc123',
    ...overrides,
  };
}

/**
 * Waits (at most 10 s) until the app stops shedding load: a slow start on a busy machine
 * makes the event-loop-delay guard answer 503 for its first sampling interval.
 */
export async function settle(t: TestApp): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if ((await t.app.inject({ method: 'GET', url: '/-/health' })).statusCode !== 503) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
