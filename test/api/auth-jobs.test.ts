import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { addMember, createProject, createUser, type TestUser } from '../helpers/factories.js';

const UNAUTHORIZED = { message: '401 Unauthorized' };

describe('job tokens', () => {
  let t: TestApp;
  let maintainer: TestUser;
  let projectId: number;
  let otherProjectId: number;
  before(async () => {
    t = await createTestApp();
    const owner = await createUser(t.app);
    maintainer = await createUser(t.app);
    projectId = (await createProject(t.app, owner, { visibility: 'private' })).id;
    otherProjectId = (await createProject(t.app, owner, { visibility: 'private' })).id;
    await addMember(t.app, 'project', projectId, maintainer, 40);
  });
  after(() => t.close());

  const startJob = async (token = maintainer.token, id = projectId) => {
    const res = await t.api('POST', `/projects/${id}/jobs`, { token, body: { name: 'build', ref: 'main' } });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ id: number; token: string; status: string }>();
  };
  const asJob = (method: 'GET' | 'POST' | 'PUT', url: string, jobToken: string, body?: unknown) =>
    t.api(method, url, { token: null, headers: { 'job-token': jobToken }, ...(body !== undefined ? { body } : {}) });

  it('a Maintainer registers a running job and gets its bsj_ token once; only its digest is stored', async () => {
    const job = await startJob();
    assert.match(job.token, /^bsj_[A-Za-z0-9_-]{40,}$/);
    assert.equal(job.status, 'running');
    const rows = await t.database.handle.db.selectFrom('ci_jobs').selectAll().where('id', '=', job.id).execute();
    assert.equal(rows[0]?.token_digest, createHash('sha256').update(job.token).digest('hex'));
    const shown = await t.api('GET', `/projects/${projectId}/jobs/${job.id}`, { token: maintainer.token });
    assert.equal(shown.json().token, undefined);
  });

  it('below Maintainer registering a job is 403', async () => {
    const developer = await createUser(t.app);
    await addMember(t.app, 'project', projectId, developer, 30);
    const res = await t.api('POST', `/projects/${projectId}/jobs`, { token: developer.token, body: {} });
    assert.equal(res.statusCode, 403);
  });

  it('GET /job answers the job for JOB-TOKEN, job_token and a Bearer job token', async () => {
    const job = await startJob();
    for (const res of [
      await asJob('GET', '/job', job.token),
      await t.api('GET', `/job?job_token=${job.token}`, { token: null }),
      await t.api('GET', '/job', { token: null, headers: { authorization: `Bearer ${job.token}` } }),
    ]) {
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.equal(body.id, job.id);
      assert.equal(body.status, 'running');
      assert.equal(body.name, 'build');
      assert.equal(body.ref, 'main');
      assert.equal(body.project.id, projectId);
      assert.equal(body.user.username, maintainer.user.username);
    }
  });

  it('GET /job with another credential is 401', async () => {
    const res = await t.api('GET', '/job', { token: maintainer.token });
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), UNAUTHORIZED);
  });

  it('reads its own project and no other', async () => {
    const job = await startJob();
    const own = await asJob('GET', `/projects/${projectId}`, job.token);
    assert.equal(own.statusCode, 200);
    assert.equal(own.json().id, projectId);
    const other = await asJob('GET', `/projects/${otherProjectId}`, job.token);
    assert.equal(other.statusCode, 404);
    assert.deepEqual(other.json(), { message: '404 Project Not Found' });
  });

  it("an administrator's job is confined to its project too", async () => {
    // root (an administrator) runs a job on a project of its own; another user's private project stays out of reach.
    const rootsProject = await t.api('POST', '/projects', { body: { name: `root-ci-${Date.now()}` } });
    assert.equal(rootsProject.statusCode, 201, rootsProject.body);
    const job = await startJob(ROOT_TOKEN, rootsProject.json().id);
    assert.equal((await asJob('GET', `/projects/${rootsProject.json().id}`, job.token)).statusCode, 200);
    const other = await asJob('GET', `/projects/${otherProjectId}`, job.token);
    assert.equal(other.statusCode, 404);
    assert.deepEqual(other.json(), { message: '404 Project Not Found' });
  });

  it('is 401 on every route outside the allow-list, however it is passed', async () => {
    const job = await startJob();
    const cases = [
      await asJob('GET', '/user', job.token),
      await asJob('GET', '/projects', job.token),
      await asJob('POST', `/projects/${projectId}/issues`, job.token, { title: 'from a job' }),
      await asJob('GET', `/projects/${projectId}/issues`, job.token),
      await t.api('GET', `/projects?job_token=${job.token}`, { token: null }),
      await t.api('GET', '/user', { token: job.token }),
      await t.api('GET', '/user', { token: null, headers: { authorization: `Bearer ${job.token}` } }),
    ];
    for (const res of cases) {
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), UNAUTHORIZED);
    }
  });

  it('an unknown job token is 401', async () => {
    const res = await asJob('GET', '/job', 'bsj_unknown-token-value');
    assert.equal(res.statusCode, 401);
    assert.deepEqual(res.json(), UNAUTHORIZED);
  });

  it('a finished job’s token is 401 everywhere; finishing twice is 400', async () => {
    const job = await startJob();
    const done = await t.api('PUT', `/projects/${projectId}/jobs/${job.id}`, { token: maintainer.token, body: { status: 'success' } });
    assert.equal(done.statusCode, 200);
    assert.equal(done.json().status, 'success');
    assert.ok(done.json().finished_at);
    for (const url of ['/job', `/projects/${projectId}`]) {
      const res = await asJob('GET', url, job.token);
      assert.equal(res.statusCode, 401, url);
      assert.deepEqual(res.json(), UNAUTHORIZED);
    }
    const again = await t.api('PUT', `/projects/${projectId}/jobs/${job.id}`, { token: maintainer.token, body: { status: 'failed' } });
    assert.equal(again.statusCode, 400);
    assert.deepEqual(again.json(), { message: '400 Bad request - Job is not running' });
  });

  it('a failed job ends the token too; other statuses are refused', async () => {
    const job = await startJob();
    const bad = await t.api('PUT', `/projects/${projectId}/jobs/${job.id}`, { token: maintainer.token, body: { status: 'running' } });
    assert.equal(bad.statusCode, 400);
    const failed = await t.api('PUT', `/projects/${projectId}/jobs/${job.id}`, { token: maintainer.token, body: { status: 'failed' } });
    assert.equal(failed.json().status, 'failed');
    assert.equal((await asJob('GET', '/job', job.token)).statusCode, 401);
  });

  it('a job of another project is 404 on this project’s jobs routes', async () => {
    const root = await t.api('POST', `/projects/${otherProjectId}/jobs`, { body: {} });
    assert.equal(root.statusCode, 201);
    const res = await t.api('PUT', `/projects/${projectId}/jobs/${root.json().id}`, {
      token: maintainer.token,
      body: { status: 'success' },
    });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { message: '404 Job Not Found' });
  });

  it('Sudo with a job token is refused: it needs an OAuth or personal token', async () => {
    // Root (an administrator) runs this job, so the admin check passes and the credential check decides.
    const res = await t.api('POST', `/projects/${projectId}/jobs`, { body: {} });
    const token: string = res.json().token;
    const sudo = await t.api('GET', `/job?sudo=${maintainer.user.username}`, { token: null, headers: { 'job-token': token } });
    assert.equal(sudo.statusCode, 403);
    assert.deepEqual(sudo.json(), { message: '403 Forbidden - Must be authenticated using an OAuth or personal access token to use sudo' });
    const notAdmin = await startJob();
    const plain = await t.api('GET', '/job?sudo=root', { token: null, headers: { 'job-token': notAdmin.token } });
    assert.deepEqual(plain.json(), { message: '403 Forbidden - Must be admin to use sudo' });
  });
});
