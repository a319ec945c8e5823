import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createProject } from '../helpers/factories.js';
import { twoProcessesWithOwner } from '../helpers/two-processes.js';
import { enableTracking, envelope, envelopePath, exceptionEvent, hex32, sentryAuth } from '../helpers/sentry.js';

/**
 * The collector keeps the grants that admitted an SDK (docs/decisions.md, "Cache epochs"):
 * a key deleted, tracking disabled or the project deleted through one process must be
 * refused at once by another that had the grant cached. Two app instances on one database
 * stand for two processes; B serves on a real socket, as another process would.
 */
describe('cached collector grants across two instances', () => {
  const env = twoProcessesWithOwner();
  let sent = 0;

  /** Posts one new event to B; answers the status. */
  async function sendToB(projectId: number, key: string): Promise<number> {
    sent += 1;
    const eventId = hex32(sent);
    const body = envelope({ event_id: eventId }, [{ type: 'event', payload: exceptionEvent({ eventId, value: `boom ${sent}` }) }]);
    const res = await fetch(`${env.bUrl}${envelopePath(projectId)}`, {
      method: 'POST',
      headers: { 'x-sentry-auth': sentryAuth(key) },
      body,
    });
    return res.status;
  }

  /** A tracked project whose grant B has cached (two accepted envelopes). */
  async function trackedOnB() {
    const project = await createProject(env.a.app, env.owner);
    const tracked = await enableTracking(env.a, project.id, env.owner.token);
    for (let i = 0; i < 2; i += 1) assert.equal(await sendToB(project.id, tracked.key), 200);
    return tracked;
  }

  it('a key deleted through A is refused by B at once', async () => {
    const tracked = await trackedOnB();
    const res = await env.a.api('DELETE', `/projects/${tracked.projectId}/error_tracking/client_keys/${tracked.keyId}`, {
      token: env.owner.token,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(await sendToB(tracked.projectId, tracked.key), 401);
  });

  it('tracking disabled through A is refused by B at once, and enabled again accepted', async () => {
    const tracked = await trackedOnB();
    const off = await env.a.api('PATCH', `/projects/${tracked.projectId}/error_tracking/settings`, {
      token: env.owner.token,
      body: { active: false },
    });
    assert.equal(off.statusCode, 200, off.body);
    // A private project answers every refusal as a wrong key does (issue 18), here 401.
    assert.equal(await sendToB(tracked.projectId, tracked.key), 401);
    const on = await env.a.api('PATCH', `/projects/${tracked.projectId}/error_tracking/settings`, {
      token: env.owner.token,
      body: { active: true },
    });
    assert.equal(on.statusCode, 200, on.body);
    assert.equal(await sendToB(tracked.projectId, tracked.key), 200);
  });

  it('a project deleted through A takes its grants with it on B at once', async () => {
    const tracked = await trackedOnB();
    const res = await env.a.api('DELETE', `/projects/${tracked.projectId}`, { token: env.owner.token });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(await sendToB(tracked.projectId, tracked.key), 401);
  });
});
