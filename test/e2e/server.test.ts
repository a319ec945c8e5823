import assert from 'node:assert/strict';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Gitlab } from '@gitbeaker/rest';
import { runMain, startServer, type ServerProcess } from '../helpers/server-process.js';

const TOKEN = 'bsp_e2e-root-token-abcdefghijklmnop';

describe('the server as npm start runs it', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer({ BASALT_ROOT_TOKEN: TOKEN });
  });
  after(async () => {
    await server.stop();
  });

  it('gitbeaker creates a group, a project, an issue and a note and reads them back', async () => {
    const api = new Gitlab({ host: server.url, token: TOKEN });
    const group = await api.Groups.create('E2E Group', 'e2e-group');
    const project = await api.Projects.create({ name: 'Widget', path: 'widget', namespaceId: group.id });
    assert.equal(project.path_with_namespace, 'e2e-group/widget');
    const issue = await api.Issues.create(project.id, 'Widget squeaks', { description: 'Oil it' });
    assert.equal(issue.iid, 1);
    const note = await api.IssueNotes.create(project.id, issue.iid, 'Oiled.');
    assert.equal(note.body, 'Oiled.');

    const byId = await api.Projects.show(project.id);
    assert.equal(byId.name, 'Widget');
    const byPath = await api.Projects.show('e2e-group/widget');
    assert.equal(byPath.id, project.id);
    const groupByPath = await api.Groups.show('e2e-group');
    assert.equal(groupByPath.id, group.id);
    const issueBack = await api.Issues.show(issue.iid, { projectId: 'e2e-group/widget' });
    assert.equal(issueBack.title, 'Widget squeaks');
    const notes = await api.IssueNotes.all(project.id, issue.iid);
    assert.deepEqual(
      notes.map((n) => n.body),
      ['Oiled.'],
    );
  });

  it('serves the probes, metrics and the OpenAPI document', async () => {
    assert.equal((await fetch(`${server.url}/-/health`)).status, 200);
    assert.equal((await fetch(`${server.url}/-/liveness`)).status, 200);
    const ready = await fetch(`${server.url}/-/readiness`);
    assert.equal(ready.status, 200);
    assert.equal(((await ready.json()) as { checks: { database: { status: string } } }).checks.database.status, 'ok');
    const metrics = await (await fetch(`${server.url}/-/metrics`)).text();
    assert.match(metrics, /http_requests_total\{method="GET",route="\/api\/v4\/projects\/:id",status="200"\}/);
    assert.match(metrics, /process_resident_memory_bytes/);
    const openapi = (await (await fetch(`${server.url}/api/v4/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.ok(openapi.paths['/api/v4/projects/{id}']);
  });

  it('logs one line per request with its id, and never the token', async () => {
    const res = await fetch(`${server.url}/api/v4/user?private_token=${TOKEN}`, { headers: { 'x-request-id': 'trace-me-123' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-request-id'), 'trace-me-123');
    await new Promise((r) => setTimeout(r, 100));
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.includes('trace-me-123'));
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /private_token=\[FILTERED\]/);
    assert.ok(!server.output().includes(TOKEN), 'the token appears in the log');
  });

  it('wrote the generated root password to DATA_DIR/initial_root_password with mode 0600', () => {
    const stat = statSync(path.join(server.dataDir, 'initial_root_password'));
    assert.equal(stat.mode & 0o777, 0o600);
  });

  it('shuts down gracefully on SIGTERM', async () => {
    const code = await server.stop('SIGTERM');
    assert.equal(code, 0);
  });
});

describe('configuration errors', () => {
  it('reports every invalid variable at once and exits 1', () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'basalt-cfg-')), 'not-a-dir');
    writeFileSync(file, 'x');
    const { status, stderr } = runMain({
      PORT: 'abc',
      DATA_DIR: file,
      STORAGES: 'broken',
      BASALT_TIER: 'gold',
      RATE_LIMITS: 'nope',
      OUTBOX_THREAD: 'sometimes',
    });
    assert.equal(status, 1);
    for (const name of ['PORT', 'DATA_DIR', 'STORAGES', 'BASALT_TIER', 'RATE_LIMITS', 'OUTBOX_THREAD'])
      assert.match(stderr, new RegExp(name));
  });

  it('an unreachable DATABASE_URL is reported with exit 1', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'basalt-cfg-'));
    const { status, stderr } = runMain({ DATA_DIR: dir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    assert.equal(status, 1);
    assert.match(stderr, /DATABASE_URL: cannot connect/);
  });
});
