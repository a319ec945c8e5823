import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_BREADCRUMBS, eventFacts } from '../../src/modules/error-tracking/event-view.rules.js';
import { dailyOf, niceMax } from '../../src/modules/error-tracking/charts.rules.js';

describe('what the error page reads from an event', () => {
  it('reads breadcrumbs, tags, user, request, contexts and SDK in the shapes SDKs send', () => {
    const facts = eventFacts(
      JSON.stringify({
        breadcrumbs: { values: [{ timestamp: 1700000000.5, category: 'http', level: 'info', message: 'GET /', data: { status: 200 } }] },
        tags: [['browser', 'Firefox'], ['bad']],
        user: { id: 'u1', email: 'u@example.com', extra: null },
        request: { method: 'POST', url: 'https://x.example/a', query_string: 'q=1', headers: [['Accept', 'text/html']] },
        contexts: { os: { name: 'Linux' }, broken: 'not an object' },
        sdk: { name: 'sentry.python', version: '1.21.0', packages: [{ name: 'pypi:sentry-sdk', version: '1.21.0' }] },
      }),
    );
    assert.deepEqual(facts.breadcrumbs, [
      { timestamp: 1700000000500, category: 'http', level: 'info', type: null, message: 'GET /', data: [['status', '200']] },
    ]);
    assert.deepEqual(facts.tags, [['browser', 'Firefox']]);
    assert.deepEqual(facts.user, [
      ['id', 'u1'],
      ['email', 'u@example.com'],
    ]);
    assert.deepEqual(facts.request, { method: 'POST', url: 'https://x.example/a', query: 'q=1', headers: [['Accept', 'text/html']] });
    assert.deepEqual(facts.contexts, [{ name: 'os', entries: [['name', 'Linux']] }]);
    assert.deepEqual(facts.sdk, { name: 'sentry.python', version: '1.21.0', packages: ['pypi:sentry-sdk 1.21.0'] });
    assert.deepEqual(eventFacts(JSON.stringify({ tags: { a: 1 } })).tags, [['a', '1']]);
  });

  it('is bounded and forgiving: the newest breadcrumbs, long values cut, an unreadable payload shows nothing', () => {
    const many = Array.from({ length: 150 }, (_, i) => ({ message: `b${i}` }));
    const facts = eventFacts(JSON.stringify({ breadcrumbs: many, user: { note: 'x'.repeat(2000) } }));
    assert.equal(facts.breadcrumbs.length, MAX_BREADCRUMBS);
    assert.equal(facts.breadcrumbs.at(-1)?.message, 'b149');
    assert.equal(facts.user[0]?.[1].length, 500);
    assert.deepEqual(eventFacts('not json'), { breadcrumbs: [], tags: [], user: [], request: null, contexts: [], sdk: null });
    assert.deepEqual(eventFacts('[1,2]').tags, []);
  });

  it('sums hours into UTC days and picks a readable axis top', () => {
    const day = 86_400_000;
    const hours = [
      { at: 2 * day - 3_600_000, count: 2 },
      { at: 2 * day, count: 1 },
      { at: 2 * day + 3_600_000, count: 4 },
    ];
    assert.deepEqual(dailyOf(hours), [
      { at: day, count: 2 },
      { at: 2 * day, count: 5 },
    ]);
    assert.deepEqual([0, 1, 3, 7, 10, 11, 230, 999].map(niceMax), [1, 1, 5, 10, 10, 20, 500, 1000]);
  });
});
