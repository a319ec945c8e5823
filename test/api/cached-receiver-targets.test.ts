import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createIntegration, pathOf, type CreatedIntegration } from '../helpers/alerts.js';
import { createProject } from '../helpers/factories.js';
import { twoProcessesWithOwner } from '../helpers/two-processes.js';

/**
 * The alert receiver keeps what a URL resolves to (docs/decisions.md, "Cache epochs"): an
 * integration deactivated, its key reset, the settings changed or the project renamed through
 * one process must hold at once in another that had the target cached. Two app instances on
 * one database stand for two processes; B serves on a real socket, as another process would.
 */
describe('cached alert receiver targets across two instances', () => {
  const env = twoProcessesWithOwner();
  let sent = 0;

  /** Posts a new alert to B at `path`; answers the status and body. */
  async function notifyB(path: string, key: string): Promise<{ status: number; body: unknown }> {
    sent += 1;
    const res = await fetch(`${env.bUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ title: `Alert ${sent}`, fingerprint: `f-${sent}` }),
    });
    return { status: res.status, body: await res.json() };
  }

  /** A project with an integration whose target B has cached (two accepted alerts). */
  async function cachedOnB(visibility = 'private'): Promise<{ projectId: number; integration: CreatedIntegration; path: string }> {
    const project = await createProject(env.a.app, env.owner, { visibility });
    const integration = await createIntegration(env.a, project.id, { name: 'Monitoring', active: true }, env.owner.token);
    const path = pathOf(integration.url);
    for (let i = 0; i < 2; i += 1) assert.equal((await notifyB(path, integration.token)).status, 200);
    return { projectId: project.id, integration, path };
  }

  const integrationUrl = (projectId: number, id: number) => `/projects/${projectId}/alert_management/integrations/${id}`;

  it('an integration deactivated through A is refused by B at once', async () => {
    // On a public project an inactive integration is 403 (a private one answers 401, as a wrong key).
    const { projectId, integration, path } = await cachedOnB('public');
    const put = await env.a.api('PUT', integrationUrl(projectId, integration.id), { token: env.owner.token, body: { active: false } });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal((await notifyB(path, integration.token)).status, 403);
  });

  it('a key reset through A refuses the old key on B at once and takes the new one', async () => {
    const { projectId, integration, path } = await cachedOnB();
    const reset = await env.a.api('POST', `${integrationUrl(projectId, integration.id)}/reset_token`, { token: env.owner.token });
    assert.equal(reset.statusCode, 200, reset.body);
    assert.equal((await notifyB(path, integration.token)).status, 401);
    assert.equal((await notifyB(path, reset.json<{ token: string }>().token)).status, 200);
  });

  it('settings changed through A apply on B at once (create_issue opens an incident)', async () => {
    const { projectId, integration, path } = await cachedOnB();
    const put = await env.a.api('PUT', `/projects/${projectId}/alert_management/settings`, {
      token: env.owner.token,
      body: { create_issue: true },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal((await notifyB(path, integration.token)).status, 200);
    const issues = await env.a.api('GET', `/projects/${projectId}/issues`, { token: env.owner.token });
    assert.equal(issues.json<unknown[]>().length, 1, 'the alert opened an incident');
  });

  it('a project renamed through A no longer answers at its old path on B', async () => {
    const { projectId, integration, path } = await cachedOnB();
    const put = await env.a.api('PUT', `/projects/${projectId}`, { token: env.owner.token, body: { path: `renamed-${projectId}` } });
    assert.equal(put.statusCode, 200, put.body);
    // A path that names no project answers as a wrong key does (401), so existence cannot be probed.
    assert.equal((await notifyB(path, integration.token)).status, 401);
    const moved = path.replace(/\/[^/]+\/alerts\//, `/renamed-${projectId}/alerts/`);
    assert.equal((await notifyB(moved, integration.token)).status, 200);
  });
});
