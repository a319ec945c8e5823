import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, parseRateLimits, parseTrustProxy } from '../../src/config/config.js';

describe('RATE_LIMITS', () => {
  it('reads counts and periods, with a multiple of the unit', () => {
    const problems: string[] = [];
    assert.deepEqual(parseRateLimits('sign_in=10/m, alerts=100/5m,collector=3/h', problems), {
      sign_in: { count: 10, periodSeconds: 60 },
      alerts: { count: 100, periodSeconds: 300 },
      collector: { count: 3, periodSeconds: 3600 },
    });
    assert.deepEqual(problems, []);
  });

  it('refuses a count or a period of 0, which would refuse everything or never reset', () => {
    for (const text of ['sign_in=0/m', 'alerts=10/0m', 'alerts=10/00s', 'sign_in=-1/m']) {
      const problems: string[] = [];
      assert.deepEqual(parseRateLimits(text, problems), {}, text);
      assert.equal(problems.length, 1, text);
      assert.match(problems[0] ?? '', /^RATE_LIMITS: /);
    }
  });

  it('set but empty turns every limit off; unset keeps the defaults', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-config-'));
    assert.deepEqual(loadConfig({ DATA_DIR: dataDir, RATE_LIMITS: '' }).rateLimits, {});
    assert.deepEqual(Object.keys(loadConfig({ DATA_DIR: dataDir }).rateLimits).sort(), [
      'alerts',
      'alerts_project',
      'collector',
      'collector_project',
      'sign_in',
      'user_code',
      'web_hook_test',
    ]);
  });
});

describe('TRUST_PROXY', () => {
  it('unset or empty trusts no proxy', () => {
    assert.equal(parseTrustProxy(undefined, []), false);
    assert.equal(parseTrustProxy('  ', []), false);
  });

  it('takes a hop count, addresses and CIDR ranges, and proxy-addr names', () => {
    const problems: string[] = [];
    assert.equal(parseTrustProxy('1', problems), 1);
    assert.equal(parseTrustProxy('127.0.0.1, 10.0.0.0/8,::1', problems), '127.0.0.1,10.0.0.0/8,::1');
    assert.equal(parseTrustProxy('loopback,uniquelocal', problems), 'loopback,uniquelocal');
    assert.deepEqual(problems, []);
  });

  it('refuses anything else, "true" included (it would let any client choose its address)', () => {
    for (const text of ['true', 'yes', '0', '99', 'proxy.example', '10.0.0.0/8;rm']) {
      const problems: string[] = [];
      assert.equal(parseTrustProxy(text, problems), false, text);
      assert.match(problems[0] ?? '', /^TRUST_PROXY: /, text);
    }
  });
});

describe('PUSH_EVENT_ACTIVITIES_LIMIT', () => {
  const dataDir = () => mkdtempSync(path.join(os.tmpdir(), 'basalt-config-'));

  it('takes 0 to 50 (default 3)', () => {
    assert.equal(loadConfig({ DATA_DIR: dataDir() }).pushEventActivitiesLimit, 3);
    assert.equal(loadConfig({ DATA_DIR: dataDir(), PUSH_EVENT_ACTIVITIES_LIMIT: '0' }).pushEventActivitiesLimit, 0);
    assert.equal(loadConfig({ DATA_DIR: dataDir(), PUSH_EVENT_ACTIVITIES_LIMIT: '50' }).pushEventActivitiesLimit, 50);
  });

  it('refuses to start above 50, saying why: per-ref push details cost git work during the push', () => {
    assert.throws(
      () => loadConfig({ DATA_DIR: dataDir(), PUSH_EVENT_ACTIVITIES_LIMIT: '51' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /PUSH_EVENT_ACTIVITIES_LIMIT: "51" is above 50, the most refs of one kind per push that get their own push events/.test(
          error.message,
        ),
    );
    assert.throws(() => loadConfig({ DATA_DIR: dataDir(), PUSH_EVENT_ACTIVITIES_LIMIT: '-1' }), ConfigError);
  });
});

describe('git and request-body limits (issue 18)', () => {
  const dataDir = () => mkdtempSync(path.join(os.tmpdir(), 'basalt-config-'));
  it('default to 8 per address and 32 git processes, 3600 s, 10 MiB fetch bodies, 30 s body idle time', () => {
    const config = loadConfig({ DATA_DIR: dataDir() });
    assert.equal(config.gitMaxConcurrencyPerIp, 8);
    assert.equal(config.gitMaxConcurrency, 32);
    assert.equal(config.gitTimeoutSeconds, 3600);
    assert.equal(config.gitMaxUploadPackBytes, 10 * 1024 * 1024);
    assert.equal(config.requestBodyTimeoutSeconds, 30);
  });

  it('refuses a per-address cap above the total, and values out of range, all at once', () => {
    assert.throws(
      () =>
        loadConfig({
          DATA_DIR: dataDir(),
          GIT_MAX_CONCURRENCY: '4',
          GIT_MAX_CONCURRENCY_PER_IP: '8',
          GIT_TIMEOUT_SECONDS: '0',
          REQUEST_BODY_TIMEOUT_SECONDS: 'soon',
        }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems.length === 3 &&
        error.problems.some((p) => p.startsWith('GIT_MAX_CONCURRENCY_PER_IP')) &&
        error.problems.some((p) => p.startsWith('GIT_TIMEOUT_SECONDS')) &&
        error.problems.some((p) => p.startsWith('REQUEST_BODY_TIMEOUT_SECONDS')),
    );
  });
});

describe('OUTBOX_BUSY_PER_SECOND', () => {
  const dataDir = () => mkdtempSync(path.join(os.tmpdir(), 'basalt-config-'));
  it('defaults to 8 mails a second while busy and takes 1 to 1000', () => {
    assert.equal(loadConfig({ DATA_DIR: dataDir() }).outboxBusyPerSecond, 8);
    assert.equal(loadConfig({ DATA_DIR: dataDir(), OUTBOX_BUSY_PER_SECOND: '1000' }).outboxBusyPerSecond, 1000);
  });

  it('refuses 0 (mail would never leave a busy process) and values that are not counts', () => {
    for (const value of ['0', '1001', 'fast']) {
      assert.throws(
        () => loadConfig({ DATA_DIR: dataDir(), OUTBOX_BUSY_PER_SECOND: value }),
        (error: unknown) => error instanceof ConfigError && error.problems.some((p) => p.startsWith('OUTBOX_BUSY_PER_SECOND')),
        value,
      );
    }
  });
});
