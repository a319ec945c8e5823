// How an incoming alert becomes an alert a client sees: the SPEC "Alert" rules for the generic
// and Prometheus shapes, and which payloads share a fingerprint (and so one alert).
import assert from 'node:assert/strict';
import { hash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ValidationError } from '../../src/infra/errors/index.js';
import { checkMappings, mappedDocument } from '../../src/modules/alerts/mappings.rules.js';
import {
  canonicalJson,
  fingerprintOf,
  genericSeverity,
  normalizeHosts,
  parseTime,
  payloadFingerprint,
} from '../../src/modules/alerts/normalize-common.rules.js';
import { DEFAULT_TITLE, normalizeGeneric } from '../../src/modules/alerts/normalize-generic.rules.js';
import {
  isPrometheusPayload,
  normalizePrometheusItem,
  prometheusSeverity,
  queryOf,
} from '../../src/modules/alerts/normalize-prometheus.rules.js';

const sha1 = (text: string) => hash('sha1', text, 'hex');
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

describe('alert fingerprints', () => {
  it('are the SHA-1 of the text, or of an array flattened and joined without separator; blank gives none', () => {
    assert.equal(fingerprintOf('abc'), sha1('abc'));
    assert.equal(fingerprintOf(['a', ['b', 'c']]), sha1('abc'));
    assert.equal(fingerprintOf(['ab', 'c']), fingerprintOf('abc'));
    assert.equal(fingerprintOf(42), sha1('42'));
    for (const blank of [undefined, null, false, '', '  ', [], {}]) assert.equal(fingerprintOf(blank), null, JSON.stringify(blank));
  });

  it('read objects as canonical JSON, so key order does not matter', () => {
    assert.equal(canonicalJson({ b: 1, a: [{ d: 2, c: null }] }), '{"a":[{"c":null,"d":2}],"b":1}');
    assert.equal(fingerprintOf({ b: 1, a: 2 }), fingerprintOf({ a: 2, b: 1 }));
    assert.notEqual(fingerprintOf({ a: 1 }), fingerprintOf({ a: '1' }));
  });

  it('generated from a generic payload ignore start_time, end_time and hosts, and nothing else', () => {
    const base = { title: 'Disk full', service: 'db' };
    const fp = payloadFingerprint(base);
    assert.ok(fp);
    assert.equal(payloadFingerprint({ ...base, start_time: '2026-01-01T00:00:00Z', end_time: 'x', hosts: ['h1'] }), fp);
    assert.equal(payloadFingerprint({ service: 'db', title: 'Disk full' }), fp);
    assert.notEqual(payloadFingerprint({ ...base, severity: 'low' }), fp);
    assert.equal(payloadFingerprint({ start_time: 'x', hosts: ['a'], title: '' }), null);
  });
});

describe('generic alerts', () => {
  const normalize = (payload: Record<string, unknown>, generateFingerprint = false) =>
    normalizeGeneric(payload, { now: NOW, generateFingerprint });

  it('default to the title "New: Alert", critical, started now, firing', () => {
    const alert = normalize({});
    assert.equal(alert.title, DEFAULT_TITLE);
    assert.equal(alert.title, 'New: Alert');
    assert.equal(alert.severity, 'critical');
    assert.equal(alert.startedAt, NOW);
    assert.equal(alert.endedAt, null);
    assert.equal(alert.resolving, false);
    assert.equal(alert.fingerprint, null);
  });

  it('read severity case-insensitively, anything unknown being critical', () => {
    assert.equal(genericSeverity('LOW'), 'low');
    assert.equal(genericSeverity('info'), 'info');
    assert.equal(genericSeverity('unknown'), 'unknown');
    assert.equal(genericSeverity('p1'), 'critical');
    assert.equal(genericSeverity(3), 'critical');
  });

  it('resolve when end_time is present, and keep the other keys as custom fields', () => {
    const alert = normalize({ title: 'T', start_time: '2026-01-01T00:00:00Z', end_time: '2026-01-01T01:00:00Z', team: 'ops' });
    assert.equal(alert.startedAt, Date.UTC(2026, 0, 1));
    assert.equal(alert.endedAt, Date.UTC(2026, 0, 1, 1));
    assert.equal(alert.resolving, true);
    assert.deepEqual(alert.customFieldPaths, [['team']]);
  });

  it('bound the title to 200 characters and hosts to 255 joined', () => {
    assert.equal(normalize({ title: 'x'.repeat(300) }).title.length, 200);
    assert.deepEqual(normalizeHosts('h'), ['h']);
    assert.deepEqual(normalizeHosts(['a', ['b', ''], 7]), ['a', 'b', '7']);
    assert.equal(normalizeHosts(['a'.repeat(200), 'b'.repeat(200), 'c']).join('').length, 255);
  });

  it('take an explicit fingerprint over a generated one, and generate one only when asked', () => {
    assert.equal(normalize({ title: 'T', fingerprint: 'abc' }, true).fingerprint, sha1('abc'));
    assert.equal(normalize({ title: 'T' }, false).fingerprint, null);
    assert.equal(normalize({ title: 'T' }, true).fingerprint, payloadFingerprint({ title: 'T' }));
  });

  it('read times as ISO 8601 or epoch milliseconds; the rest reads as absent', () => {
    assert.equal(parseTime('2026-01-01T00:00:00Z'), Date.UTC(2026, 0, 1));
    assert.equal(parseTime(1_700_000_000_000.7), 1_700_000_000_000);
    assert.equal(parseTime('yesterday'), null);
    assert.equal(parseTime(''), null);
    assert.equal(parseTime(Number.POSITIVE_INFINITY), null);
  });

  it('follow a custom mapping whenever the mapped value is present', () => {
    const payload = { alert: { name: 'Mapped', sev: 'low' }, title: 'Default' };
    const mappings = [
      { field_name: 'title' as const, path: ['alert', 'name'], type: 'string' as const },
      { field_name: 'severity' as const, path: ['alert', 'sev'], type: 'string' as const },
      { field_name: 'service' as const, path: ['alert', 'missing'], type: 'string' as const },
    ];
    const alert = normalizeGeneric({ ...payload, service: 'svc' }, { now: NOW, generateFingerprint: false, mappings });
    assert.equal(alert.title, 'Mapped');
    assert.equal(alert.severity, 'low');
    assert.equal(alert.service, 'svc');
  });
});

describe('Prometheus alerts', () => {
  const item = {
    status: 'firing',
    labels: { alertname: 'HighLatency', severity: 'P2' },
    annotations: { summary: 'Latency is high', runbook: 'https://runbooks.example/latency', owner: 'ops' },
    startsAt: '2026-01-01T00:00:00Z',
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus.example/graph?g0.expr=rate%28x%5B5m%5D%29+%3E+1',
  };

  it('recognise the Alertmanager shape by its keys and version "4"', () => {
    const payload = {
      version: '4',
      groupKey: 'g',
      status: 'firing',
      receiver: 'r',
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      externalURL: 'http://am',
      alerts: [],
    };
    assert.equal(isPrometheusPayload(payload), true);
    assert.equal(isPrometheusPayload({ ...payload, version: '3' }), false);
    assert.equal(isPrometheusPayload({ title: 'generic' }), false);
  });

  it('map severity aliases case-insensitively, unknown being critical', () => {
    assert.equal(prometheusSeverity('P2'), 'high');
    assert.equal(prometheusSeverity('warning'), 'low');
    assert.equal(prometheusSeverity('Notice'), 'info');
    assert.equal(prometheusSeverity('error'), 'medium');
    assert.equal(prometheusSeverity('toString'), 'critical');
    assert.equal(prometheusSeverity(undefined), 'critical');
  });

  it('take the title from annotations, the query from the generator URL, and fingerprint start/title/query', () => {
    const alert = normalizePrometheusItem(item, NOW);
    assert.ok(alert);
    assert.equal(alert.title, 'Latency is high');
    assert.equal(alert.severity, 'high');
    assert.equal(alert.monitoringTool, 'Prometheus');
    assert.equal(alert.fullQuery, 'rate(x[5m]) > 1');
    assert.equal(alert.runbook, 'https://runbooks.example/latency');
    assert.equal(alert.fingerprint, sha1('2026-01-01T00:00:00Z/Latency is high/rate(x[5m]) > 1'));
    assert.deepEqual(alert.customFieldPaths, [['annotations', 'owner']]);
    assert.equal(alert.resolving, false, "Go's zero time is no end");
    assert.equal(alert.endedAt, null);
  });

  it('give the same fingerprint to a firing and a resolved notice of one alert, and another to another start', () => {
    const firing = normalizePrometheusItem(item, NOW);
    const resolved = normalizePrometheusItem({ ...item, status: 'resolved', endsAt: '2026-01-01T00:10:00Z' }, NOW);
    const again = normalizePrometheusItem({ ...item, startsAt: '2026-01-01T00:05:00Z' }, NOW);
    assert.equal(resolved?.fingerprint, firing?.fingerprint);
    assert.equal(resolved?.resolving, true);
    assert.equal(resolved?.endedAt, Date.UTC(2026, 0, 1, 0, 10));
    assert.notEqual(again?.fingerprint, firing?.fingerprint);
  });

  it('resolve on an end in the past, not on a future expiry', () => {
    assert.equal(normalizePrometheusItem({ ...item, endsAt: new Date(NOW + 60_000).toISOString() }, NOW)?.resolving, false);
    assert.equal(normalizePrometheusItem({ ...item, endsAt: new Date(NOW - 60_000).toISOString() }, NOW)?.resolving, true);
  });

  it('skip an item without title or startsAt', () => {
    assert.equal(normalizePrometheusItem({ ...item, startsAt: '' }, NOW), null);
    assert.equal(normalizePrometheusItem({ startsAt: item.startsAt }, NOW), null);
    assert.equal(normalizePrometheusItem({ labels: { alertname: 'A' }, startsAt: item.startsAt }, NOW)?.title, 'A');
  });

  it('read no query from a URL without g0.expr or no URL', () => {
    assert.equal(queryOf('http://prometheus.example/graph'), null);
    assert.equal(queryOf('not a url'), null);
    assert.equal(queryOf(7), null);
  });
});

describe('payload attribute mappings', () => {
  const example = { alerts: [{ name: 'N', when: '2026-01-01T00:00:00Z' }] };

  it('are checked against the first item of a sample with alerts', () => {
    assert.deepEqual(mappedDocument(example), { name: 'N', when: '2026-01-01T00:00:00Z' });
    assert.deepEqual(checkMappings([{ field_name: 'title', path: ['name'], type: 'string' }], example), [
      { field_name: 'title', path: ['name'], type: 'string', label: null },
    ]);
  });

  it('refuse unknown fields, wrong types, repeats, paths not in the sample, and mappings without a sample', () => {
    const problems = (mappings: Parameters<typeof checkMappings>[0], sample: Record<string, unknown> | null = example) => {
      try {
        checkMappings(mappings, sample);
        return '';
      } catch (error) {
        assert.ok(error instanceof ValidationError);
        return JSON.stringify(error.body());
      }
    };
    assert.match(problems([{ field_name: 'colour', path: ['name'], type: 'string' }]), /field_name colour is not one of/);
    assert.match(problems([{ field_name: 'start_time', path: ['when'], type: 'string' }]), /type of start_time must be datetime/);
    assert.match(
      problems([
        { field_name: 'title', path: ['name'], type: 'string' },
        { field_name: 'title', path: ['name'], type: 'string' },
      ]),
      /mapped twice/,
    );
    assert.match(problems([{ field_name: 'title', path: ['nope'], type: 'string' }]), /is not in the payload_example/);
    assert.match(problems([{ field_name: 'title', path: ['name'], type: 'string' }], null), /need a payload_example/);
  });
});
