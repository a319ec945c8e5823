import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { customFieldsOf } from '../../src/modules/alerts/normalize-common.rules.js';

describe('alert custom fields read from the stored payload', () => {
  const payload = { team: 'db', 7: 'seven', annotations: { dashboard: 'latency', runbook: 'x' }, list: [1, 2] };

  it('names each field by the last key of its path, at the top level or under annotations', () => {
    assert.deepEqual(customFieldsOf(payload, [['team'], ['7'], ['annotations', 'dashboard'], ['list']]), {
      team: 'db',
      7: 'seven',
      dashboard: 'latency',
      list: [1, 2],
    });
  });

  it('skips paths that lead nowhere or are not paths', () => {
    assert.deepEqual(customFieldsOf(payload, [['missing'], [], [1], 'team', ['annotations', 'nope']]), {});
  });

  it('returns rows stored before paths (the values themselves) unchanged', () => {
    assert.deepEqual(customFieldsOf(payload, { team: 'ops' }), { team: 'ops' });
    assert.deepEqual(customFieldsOf(payload, null), {});
  });
});
