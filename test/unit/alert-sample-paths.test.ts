import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_SAMPLE_PATHS, mappingType, pathKey, pathsForField, samplePaths } from '../../src/modules/alerts/sample-paths.rules.js';

describe('sample paths offered by the mapping page', () => {
  const sample = { summary: { text: 'Disk full', at: 3 }, hosts: ['a', 'b'], nested: [{ id: 'x' }], empty: {}, flag: true };

  it('offers texts, numbers and lists of them, walking objects and list items', () => {
    assert.deepEqual(
      samplePaths(sample).map((p) => [p.label, p.kind, p.example]),
      [
        ['summary.text', 'text', 'Disk full'],
        ['summary.at', 'text', '3'],
        ['hosts', 'array', '["a","b"]'],
        ['hosts[0]', 'text', 'a'],
        ['hosts[1]', 'text', 'b'],
        ['nested[0].id', 'text', 'x'],
      ],
    );
  });

  it('offers lists only to the fields that take them, and types each mapping by field and value', () => {
    const paths = samplePaths(sample);
    assert.ok(pathsForField('hosts', paths).some((p) => p.kind === 'array'));
    assert.ok(!pathsForField('title', paths).some((p) => p.kind === 'array'));
    assert.equal(mappingType('hosts', 'array'), 'array');
    assert.equal(mappingType('start_time', 'text'), 'datetime');
    assert.equal(mappingType('title', 'text'), 'string');
    assert.equal(pathKey(['alerts', 0, 'title']), '["alerts",0,"title"]');
  });

  it('stops at the bound and shortens long values', () => {
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, 'v'.repeat(100)]));
    const paths = samplePaths(wide);
    assert.equal(paths.length, MAX_SAMPLE_PATHS);
    assert.equal(paths[0]!.example.length, 40);
  });
});
