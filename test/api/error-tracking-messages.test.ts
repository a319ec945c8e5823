import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import type { TestUser } from '../helpers/factories.js';
import { gzip, post, sentryAuth, storePath, type TrackedProject, trackedProject } from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

/**
 * Log records as sentry-python's logging integration sends them (1.9.10, Debian's
 * python3-sentry-sdk): `logentry: {message, params}` and no `formatted`, gzip, to /store/.
 */
describe('error tracking: log messages with params', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'])));
  after(() => t.close());

  const fresh = async (): Promise<TrackedProject> => trackedProject(t, owner);
  const logRecord = async (p: TrackedProject, message: string, params: unknown) => {
    const event = { platform: 'python', level: 'error', logger: 'shop.sync', logentry: { message, params } };
    const res = await post(t, storePath(p.projectId), gzip(JSON.stringify(event)), {
      'x-sentry-auth': sentryAuth(p.key, 'sentry.python/1.9.10'),
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    assert.equal(res.statusCode, 200, res.body);
  };
  const titles = async (p: TrackedProject): Promise<[string, number][]> => {
    const res = await t.api('GET', `/projects/${p.projectId}/error_tracking/errors?sort=frequency`, { token: owner.token });
    assert.equal(res.statusCode, 200, res.body);
    return res
      .json<{ title: string; count: number }[]>()
      .map((e): [string, number] => [e.title, e.count])
      .sort();
  };

  it('a logentry without formatted text is read with its params filled in, and grouped by its template', async () => {
    const p = await fresh();
    await logRecord(p, 'Order %s failed to sync', [41]);
    await logRecord(p, 'Order %s failed to sync', [42]);
    assert.deepEqual(await titles(p), [['Order 42 failed to sync', 2]]);
  });

  it('params as Python prints them: %d, %r, None, True, named fields from an object, %% as %', async () => {
    const p = await fresh();
    await logRecord(p, 'Retry %d of %s for %r', [2.9, 'sync', 'ann']);
    await logRecord(p, 'Flags %s %s', [null, true]);
    await logRecord(p, 'Disk %(mount)s at %(percent)d%%', { mount: '/srv', percent: 97.5 });
    assert.deepEqual(await titles(p), [
      ['Disk /srv at 97%', 1],
      ['Flags None True', 1],
      ["Retry 2 of sync for 'ann'", 1],
    ]);
  });

  it('a hostile template (200,000 unclosed `%(`, 100,000 `%`) with params is answered at once', async () => {
    const p = await fresh();
    const started = performance.now();
    await logRecord(p, '%('.repeat(200_000), { name: 'x' });
    await logRecord(p, `${'%'.repeat(100_000)}${' '.repeat(100_000)}s`, ['x']);
    assert.ok(performance.now() - started < 5_000, `took ${Math.round(performance.now() - started)} ms`);
    assert.equal((await titles(p)).length, 2);
  });

  it('a template without params, or with params that do not fit it, is shown as it is', async () => {
    const p = await fresh();
    await logRecord(p, 'Progress at 100%', []);
    await logRecord(p, 'Needs %s and %s', ['one']);
    await logRecord(p, 'Takes %s', ['one', 'two']);
    await logRecord(p, 'Named %(missing)s', { other: 1 });
    assert.deepEqual(await titles(p), [
      ['Named %(missing)s', 1],
      ['Needs %s and %s', 1],
      ['Progress at 100%', 1],
      ['Takes %s', 1],
    ]);
  });
});
