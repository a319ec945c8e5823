import type { Metric, Registry } from 'prom-client';
import { DOMAIN_COUNTERS, type DomainCounter, type DomainGauge, type DomainMetrics, type GaugeSample } from '../domain-metrics.js';

interface Counted {
  labels: Record<string, string>;
  value: number;
}

/**
 * The domain figures of `/-/metrics` (the `platform.metrics` port). Counters are plain maps
 * handed to prom-client in its own metric shape, as the request metrics are (metrics.ts): a
 * count costs one map lookup. Gauges are read when scraped. Created before the registry exists
 * (the platform is built first), attached to it with `register`.
 */
export class DomainMetricsRegistry implements DomainMetrics {
  private readonly counters = new Map<DomainCounter, Map<string, Counted>>();
  private readonly gauges: DomainGauge[] = [];
  private registry: Registry | null = null;

  increment(name: DomainCounter, labels: Record<string, string>, by = 1): void {
    let series = this.counters.get(name);
    if (!series) {
      series = new Map();
      this.counters.set(name, series);
    }
    const key = Object.values(labels).join('\u0000');
    const counted = series.get(key);
    if (counted) counted.value += by;
    else series.set(key, { labels: { ...labels }, value: by });
  }

  gauge(gauge: DomainGauge): void {
    this.gauges.push(gauge);
    if (this.registry) this.registerGauge(this.registry, gauge);
  }

  /** Lists every counter (present from the start, at 0 until counted) and gauge on `registry`. */
  register(registry: Registry): void {
    this.registry = registry;
    for (const name of Object.keys(DOMAIN_COUNTERS) as DomainCounter[]) {
      const spec = { name, help: DOMAIN_COUNTERS[name].help, type: 'counter', aggregator: 'sum' };
      registry.registerMetric({
        ...spec,
        get: async () => ({
          ...spec,
          values: [...(this.counters.get(name)?.values() ?? [])].map((c) => ({ labels: { ...c.labels }, value: c.value })),
        }),
        reset: () => this.counters.delete(name),
      } as unknown as Metric);
    }
    for (const gauge of this.gauges) this.registerGauge(registry, gauge);
  }

  private registerGauge(registry: Registry, gauge: DomainGauge): void {
    const spec = { name: gauge.name, help: gauge.help, type: 'gauge', aggregator: gauge.aggregator };
    registry.registerMetric({
      ...spec,
      get: async () => {
        // A figure that cannot be read (the database is away) is left out of this scrape rather
        // than failing the whole answer.
        const samples: GaugeSample[] = await Promise.resolve()
          .then(() => gauge.read())
          .catch(() => []);
        return { ...spec, values: samples.map((s) => ({ labels: { ...s.labels }, value: s.value })) };
      },
      reset: () => undefined,
    } as unknown as Metric);
  }
}
