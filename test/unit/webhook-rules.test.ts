import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkHookUrl, isLocalAddress } from '../../src/modules/webhooks/address.rules.js';
import { branchMatches, checkBranchFilter } from '../../src/modules/webhooks/branch-filter.rules.js';
import { CLEARED, afterFailure, alertStatus, deliveryBackoffMs, type FailureState } from '../../src/modules/webhooks/failure.rules.js';
import { isoUtc, railsUtc, triggerOf } from '../../src/modules/webhooks/payloads.rules.js';

describe('webhook rules', () => {
  it('local addresses: loopback, private, shared, link-local, unique-local, reserved, and IPv4 inside IPv6', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fd00::1',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:0a00:0001',
      '64:ff9b::10.0.0.1',
      'not-an-address',
    ])
      assert.equal(isLocalAddress(address), true, address);
    for (const address of ['8.8.8.8', '203.0.113.10', '172.32.0.1', '100.128.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8'])
      assert.equal(isLocalAddress(address), false, address);
  });

  it('a hook URL is http or https, has a host and no credentials', () => {
    assert.equal(checkHookUrl('https://hooks.example.com/x?y=1').ok, true);
    for (const url of [
      'ftp://example.com/',
      'javascript:alert(1)',
      'not a url',
      'http://user:pw@example.com/',
      `https://e.com/${'a'.repeat(2050)}`,
    ])
      assert.equal(checkHookUrl(url).ok, false, url);
  });

  it('branch filters: wildcard lists, regular expressions, all branches', () => {
    assert.equal(branchMatches('wildcard', null, 'anything'), true);
    assert.equal(branchMatches('wildcard', '', 'anything'), true);
    assert.equal(branchMatches('wildcard', 'main', 'main'), true);
    assert.equal(branchMatches('wildcard', 'main', 'main2'), false);
    assert.equal(branchMatches('wildcard', 'main, release/*', 'release/1.0'), true);
    assert.equal(branchMatches('wildcard', 'feature-*', 'feature-a/b'), true);
    assert.equal(branchMatches('wildcard', 'a.b', 'axb'), false, 'a dot is a dot');
    assert.equal(branchMatches('regex', '^(main|release/.*)$', 'release/2'), true);
    assert.equal(branchMatches('regex', '^main$', 'develop'), false);
    assert.equal(branchMatches('all_branches', 'main', 'develop'), true);
    assert.equal(checkBranchFilter('regex', '('), 'is not a valid regular expression');
    assert.equal(checkBranchFilter('wildcard', '('), null);
    assert.match(checkBranchFilter('regex', 'a'.repeat(300)) ?? '', /too long/);
    for (const risky of ['(a+)+$', '^(\\w*)*$', '(a|a?)+', '(x{1,5})*', '^(release/.*)+$'])
      assert.match(checkBranchFilter('regex', risky) ?? '', /exponential/, risky);
    for (const fine of ['^(main|release/.*)$', '^feature/[a-z]+$', '(a)+', '^v\\d+\\.\\d+$', '\\(a+\\)+'])
      assert.equal(checkBranchFilter('regex', fine), null, fine);
  });

  it('failures: four in a row disable for a minute, each further one doubles it up to a day, forty in a row for good', () => {
    const now = 1_000_000;
    let state: FailureState = CLEARED;
    for (let i = 1; i <= 3; i += 1) {
      state = afterFailure(state, now);
      assert.equal(alertStatus(state, now), 'executable', `failure ${i}`);
    }
    state = afterFailure(state, now);
    assert.equal(alertStatus(state, now), 'temporarily_disabled');
    assert.equal(state.disabled_until, now + 60_000);
    assert.equal(alertStatus(state, now + 60_001), 'executable', 'the wait ends');
    state = afterFailure(state, now + 60_001);
    assert.equal(state.disabled_until, now + 60_001 + 120_000);
    for (let i = 0; i < 40; i += 1) state = afterFailure(state, now);
    assert.equal(alertStatus(state, now), 'permanently_disabled');
    assert.equal(state.disabled_until, null);
    assert.equal(alertStatus(CLEARED, now), 'executable');
    const capped = afterFailure({ recent_failures: 10, backoff_count: 30, disabled_until: null, permanently_disabled: 0 }, now);
    assert.equal(capped.disabled_until, now + 86_400_000);
    assert.deepEqual([1, 2, 3, 4].map(deliveryBackoffMs), [60_000, 120_000, 240_000, 480_000]);
  });

  it('triggers and the time formats of the payloads', () => {
    assert.equal(triggerOf('issue', true), 'confidential_issues_events');
    assert.equal(triggerOf('note', false), 'note_events');
    assert.equal(isoUtc(Date.UTC(2013, 11, 3, 17, 15, 43, 120)), '2013-12-03T17:15:43Z');
    assert.equal(railsUtc(Date.UTC(2015, 4, 17, 18, 8, 9)), '2015-05-17 18:08:09 UTC');
  });
});
