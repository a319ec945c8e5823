import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditEntry } from '../../src/infra/audit.js';
import { decodeEvents, encodeEvents } from '../../src/modules/audit/audit-set.encoding.js';

const created = (id: number, overrides: Partial<AuditEntry> = {}): AuditEntry => ({
  authorId: 7,
  authorName: 'ada',
  ipAddress: '127.0.0.1',
  entityType: 'User',
  entityId: 7,
  entityPath: 'ada',
  targetType: 'PersonalAccessToken',
  targetId: id,
  targetDetails: 'ci "deploy" \\ token ✓',
  eventName: 'personal_access_token_created',
  details: { scopes: ['api', 'read_user'], expires_at: null },
  at: 1_790_000_000_000,
  ...overrides,
});

/** An entry's values as the view and the API's rows hold them: the view's columns in order, details as JSON. */
const rowOf = (entry: AuditEntry): unknown[] => [
  entry.authorId,
  entry.authorName,
  entry.entityType,
  entry.entityId,
  entry.entityPath,
  entry.targetType,
  entry.targetId,
  entry.targetDetails,
  entry.eventName,
  JSON.stringify(entry.details),
  entry.ipAddress,
  entry.at,
];

describe('the text of an audit event set', () => {
  it('decodes to the rows of every entry, in order, quotes and non-ASCII kept', () => {
    const entries = [
      created(1),
      created(2, { targetDetails: 'second', at: 1_790_000_000_005 }),
      created(3, { details: { scopes: ['api'], expires_at: '2027-01-31', impersonated_by: 'root' } }),
      created(4, { authorId: -1, authorName: 'An unauthenticated user', ipAddress: null, targetType: null }),
    ];
    assert.deepEqual(decodeEvents(encodeEvents(entries)), entries.map(rowOf));
  });

  it('writes what every entry shares once, detail objects compared by their facts', () => {
    const entries = [created(1), created(2), created(3)];
    const text = encodeEvents(entries);
    const parsed = JSON.parse(text) as { shared: Record<string, unknown>; rows: unknown[] };
    assert.deepEqual(parsed.rows, [{ 6: 1 }, { 6: 2 }, { 6: 3 }], 'each event keeps only its own values, by column');
    assert.deepEqual(parsed.shared['9'], { scopes: ['api', 'read_user'], expires_at: null });
    assert.equal(text.split('personal_access_token_created').length, 2);
    assert.deepEqual(decodeEvents(text), entries.map(rowOf));
  });

  it('keeps details apart that differ in one scope, one key or one value', () => {
    const entries = [
      created(1),
      created(2, { details: { scopes: ['api', 'write_repository'], expires_at: null } }),
      created(3, { details: { scopes: ['api', 'read_user'], expires_on: null } }),
      created(4, { details: { scopes: ['api', 'read_user'], expires_at: '2027-01-01' } }),
      created(5, { details: {} }),
    ];
    assert.deepEqual(decodeEvents(encodeEvents(entries)), entries.map(rowOf));
  });

  it('one entry, and none', () => {
    assert.deepEqual(decodeEvents(encodeEvents([created(9)])), [rowOf(created(9))]);
    assert.deepEqual(decodeEvents(encodeEvents([])), []);
  });

  it('refuses text it did not write: not JSON, no rows, a row missing a column', () => {
    assert.equal(decodeEvents('not JSON'), null);
    assert.equal(decodeEvents('{"shared":{}}'), null);
    assert.equal(decodeEvents('{"shared":{"0":1},"rows":[{}]}'), null);
    assert.equal(decodeEvents('{"shared":{},"rows":[[1,2]]}'), null);
  });
});
