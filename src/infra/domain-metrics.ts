/**
 * The metrics port modules count domain figures through (`platform.metrics`), so no module
 * reaches the HTTP layer's registry. src/infra/http/domain-metrics.ts implements it and lists
 * the figures on `/-/metrics`.
 */

/** The domain counters; each name is a `_total` counter on `/-/metrics`, summed across workers. */
export const DOMAIN_COUNTERS = {
  basalt_alerts_received_total: { help: 'Alerts received by the notify endpoints, by result', labelNames: ['result'] },
  basalt_error_events_ingested_total: { help: 'Error events sent to the collector, by result', labelNames: ['result'] },
  basalt_rate_limit_refusals_total: { help: 'Requests refused by a rate limit, by limit', labelNames: ['limit'] },
  basalt_audit_events_written_total: { help: 'Audit events written, by entity type', labelNames: ['entity_type'] },
} as const;
export type DomainCounter = keyof typeof DOMAIN_COUNTERS;

export interface GaugeSample {
  labels: Record<string, string>;
  value: number;
}

export interface DomainGauge {
  name: string;
  help: string;
  labelNames: readonly string[];
  /**
   * How `WORKERS=N` figures combine: `sum` for what each process holds (its git processes, its
   * pool), `max` for what every process reads from the same database (jobs, storage moves).
   */
  aggregator: 'sum' | 'max';
  /** Read at each scrape. */
  read(): GaugeSample[] | Promise<GaugeSample[]>;
}

export interface DomainMetrics {
  /**
   * Adds `by` (1) to a counter under `labels` (a label value is a small fixed set: a result, a
   * limit's name). A map lookup and an addition, cheap enough for hot paths.
   */
  increment(name: DomainCounter, labels: Record<string, string>, by?: number): void;
  /** A gauge read at scrape time. */
  gauge(gauge: DomainGauge): void;
}

/** An ingestion endpoint's answer as a `result` label: a handful of values, whatever the status. */
export function ingestResult(status: number): string {
  if (status < 300) return 'accepted';
  if (status === 401 || status === 403) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'error';
  return 'invalid';
}
