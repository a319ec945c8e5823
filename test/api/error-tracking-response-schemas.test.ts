// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import type { TestUser } from '../helpers/factories.js';
import { exceptionEvent, hex32, post, sentryAuth, storePath, trackedProject } from '../helpers/sentry.js';
import { appWithUsers } from '../helpers/suite.js';

/**
 * Answers are serialised through their routes' response schemas, which drop whatever they do
 * not declare: the SDK's event JSON (contexts, tags, `extra`, user) must come back whole,
 * however it nests, and the details keep their pairs and nullable fields.
 */
describe('error tracking answers keep event data whole through their response schemas', () => {
  let t: TestApp;
  let owner: TestUser;
  before(async () => ({ t, owner } = await appWithUsers(['owner'])));
  after(() => t.close());

  const nested = {
    // `extra` within the depth ingestion keeps (event-trim.rules.ts).
    extra: { order: { lines: [{ sku: 'a', qty: 2, flags: ['x', null, 1.5, false] }], empty: {} } },
    tags: { region: 'eu-1', ünïcødé: '"quoted" \\ \n' },
    contexts: {
      os: { name: 'Linux', version: '6.1' },
      runtime: { name: 'CPython', version: '3.11.2' },
      custom: { list: [[], [[]]], deep: { a: { b: { c: { d: [{ e: [true, null] }] } } } } },
    },
    user: { id: '42', email: 'ana@example.test', data: { plan: { tier: 'gold' } } },
  };

  it('an event shows its whole nested payload; the details show frequency pairs, the latest event and the stack trace', async () => {
    const p = await trackedProject(t, owner);
    const event = { ...exceptionEvent({ eventId: hex32(7) }), ...nested };
    const stored = await post(t, storePath(p.projectId), JSON.stringify(event), { 'x-sentry-auth': sentryAuth(p.key) });
    assert.equal(stored.statusCode, 200, stored.body);
    assert.deepEqual(stored.json(), { id: hex32(7) });

    const base = `/projects/${p.projectId}/error_tracking/errors`;
    const [listed] = (await t.api('GET', base, { token: owner.token })).json();
    assert.equal(listed.issue_iid, null);
    assert.equal(listed.count, 1);
    assert.equal(listed.user_count, 1);

    const events = (await t.api('GET', `${base}/${listed.id}/events`, { token: owner.token })).json();
    assert.equal(events.length, 1);
    for (const [key, value] of Object.entries(nested)) assert.deepEqual(events[0].payload[key], value, key);
    const row = await t.database.handle.db
      .selectFrom('error_tracking_error_events')
      .select('payload')
      .where('error_id', '=', listed.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(events[0].payload, JSON.parse(row.payload), 'the payload as stored');
    assert.equal(events[0].user, 'id:42');
    assert.equal(events[0].release, null);

    const details = (await t.api('GET', `${base}/${listed.id}`, { token: owner.token })).json();
    assert.equal(details.frequency['24h'].length, 24);
    assert.equal(details.frequency['30d'].length, 720);
    const [hour, count] = details.frequency['24h'].at(-1);
    assert.match(hour, /^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
    assert.equal(count, 1);
    assert.equal(details.latest_event.event_id, hex32(7));
    assert.equal(details.latest_event.payload, undefined, 'the latest event comes without its payload');
    assert.equal(details.stack_trace.type, 'ZeroDivisionError');
    const raising = details.stack_trace.frames[0];
    assert.deepEqual(
      raising.context.find(([line]: [number]) => line === 42),
      [42, '    return total / count'],
    );
    assert.equal(raising.in_app, true);
    assert.equal(raising.colno, null);
  });

  it('settings answer the external-tracker fields as null', async () => {
    const p = await trackedProject(t, owner);
    const settings = (await t.api('GET', `/projects/${p.projectId}/error_tracking/settings`, { token: owner.token })).json();
    assert.deepEqual(settings, {
      active: true,
      project_name: null,
      tracker_external_url: null,
      api_url: null,
      integrated: true,
      email_notifications: true,
    });
  });
});
