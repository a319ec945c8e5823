import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { settle } from '../helpers/alerts.js';

/**
 * Load shedding (issue 10, deliverable 4): when the event loop falls behind, requests are
 * answered 503 with Retry-After at once instead of queueing, and /-/readiness says so; when
 * the loop recovers, everything answers normally again. The loop is blocked from inside the
 * test process (the app runs in-process, listening on 127.0.0.1), with no test-only route.
 */
const THRESHOLD_MS = 40;

/** Keeps the event loop busy: `blockMs` of synchronous work, then one turn, for `totalMs`. */
async function starve(totalMs: number, blockMs: number): Promise<void> {
  const end = Date.now() + totalMs;
  while (Date.now() < end) {
    const stop = Date.now() + blockMs;
    while (Date.now() < stop) {
      /* deliberately busy */
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('load shedding when the event loop falls behind', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await createTestApp({ manualClock: false, env: { LOAD_SHED_EVENT_LOOP_DELAY_MS: String(THRESHOLD_MS) } });
    await settle(t);
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  it('answers normally while the loop keeps up', async () => {
    const ready = await fetch(`${base}/-/readiness`);
    assert.equal(ready.status, 200, await ready.text());
    assert.equal((await fetch(`${base}/api/v4/user`, { headers: { 'private-token': ROOT_TOKEN } })).status, 200);
  });

  it('sheds with 503 and Retry-After, readiness fails, and both recover afterwards', { timeout: 30_000 }, async () => {
    // Requests sent while the loop is starved: the server reads them between blocks.
    const answers: Promise<Response>[] = [];
    const probes: Promise<Response>[] = [];
    const grants: Promise<Response>[] = [];
    const sender = (async () => {
      for (let i = 0; i < 20; i += 1) {
        answers.push(fetch(`${base}/api/v4/user`, { headers: { 'private-token': ROOT_TOKEN } }));
        // An unknown client's refresh: 401 invalid_client when it is served.
        grants.push(
          fetch(`${base}/oauth/token`, {
            method: 'POST',
            body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x', client_id: 'nobody' }),
          }),
        );
        probes.push(fetch(`${base}/-/readiness`));
        await sleep(100);
      }
    })();
    await starve(2_500, 150);
    await sender;
    const during = await Promise.all(answers);
    const shed = during.filter((r) => r.status === 503);
    assert.ok(shed.length > 0, `some requests were shed (${during.map((r) => r.status).join(',')})`);
    for (const res of during) assert.ok(res.status === 200 || res.status === 503, `only 200 or 503 (${res.status})`);
    const sample = shed[0] as Response;
    assert.equal(sample.headers.get('retry-after'), '5');
    assert.match((await sample.json()).message as string, /^503 Service Unavailable/);

    // The OAuth endpoints shed in their own error shape (RFC 6749), still 503 with Retry-After.
    const oauth = await Promise.all(grants);
    for (const res of oauth) assert.ok(res.status === 401 || res.status === 503, `/oauth/token: only 401 or 503 (${res.status})`);
    const oauthShed = oauth.find((r) => r.status === 503);
    assert.ok(oauthShed, `some token requests were shed (${oauth.map((r) => r.status).join(',')})`);
    assert.equal(oauthShed.headers.get('retry-after'), '5');
    assert.equal(((await oauthShed.json()) as { error: string }).error, 'temporarily_unavailable');

    // Readiness said so while the loop was starved.
    const readiness = (await Promise.all(probes)).map((r) => r.status);
    assert.ok(readiness.includes(503), `readiness failed while shedding (${readiness.join(',')})`);

    // Recovery: within a few sampling windows the server answers again.
    let ready = 0;
    for (let i = 0; i < 50 && ready !== 200; i += 1) {
      await sleep(200);
      ready = (await fetch(`${base}/-/readiness`)).status;
    }
    assert.equal(ready, 200, 'readiness recovers');
    assert.equal((await fetch(`${base}/api/v4/user`, { headers: { 'private-token': ROOT_TOKEN } })).status, 200);
  });
});
