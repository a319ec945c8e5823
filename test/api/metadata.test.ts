// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { appWithUsers } from '../helpers/suite.js';

/** What the established product answers, with Basalt's values (docs/decisions.md, "Version endpoints"). */
const EXPECTED = {
  version: '17.9.0-basalt',
  revision: '0.1.0',
  kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
  enterprise: false,
};

describe('version and metadata endpoints', () => {
  let t: TestApp;
  let alice: TestUser;
  before(async () => ({ t, alice } = await appWithUsers(['alice'])));
  after(() => t.close());

  for (const path of ['/metadata', '/version']) {
    it(`GET ${path} answers the metadata entity: version, revision, kas, enterprise`, async () => {
      const res = await t.api('GET', path, { token: alice.token });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers['content-type']), /^application\/json\b/);
      assert.deepEqual(res.json(), EXPECTED);
    });

    it(`GET ${path} needs authentication: anonymous is 401`, async () => {
      const res = await t.api('GET', path, { token: null });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(res.json(), { message: '401 Unauthorized' });
    });

    it(`GET ${path} takes read_user, read_api or api; a token with none of them is 403 insufficient_scope`, async () => {
      for (const scopes of [['read_user'], ['read_api'], ['api']]) {
        const user = await createUser(t.app, { scopes });
        const res = await t.api('GET', path, { token: user.token });
        assert.equal(res.statusCode, 200, `${scopes.join(' ')}: ${res.body}`);
      }
      const repositoryOnly = await createUser(t.app, { scopes: ['read_repository'] });
      const res = await t.api('GET', path, { token: repositoryOnly.token });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().error, 'insufficient_scope');
    });
  }

  it('a job token is not on the allow-list of the metadata endpoints: 401', async () => {
    const project = await createProject(t.app, alice);
    const job = await t.api('POST', `/projects/${project.id}/jobs`, { token: alice.token, body: { name: 'build', ref: 'main' } });
    assert.equal(job.statusCode, 201, job.body);
    const res = await t.api('GET', '/metadata', { token: null, headers: { 'job-token': job.json().token } });
    assert.equal(res.statusCode, 401);
  });

  it('the version parses as major.minor past 17.1 (device grant), the way version-gating clients read it', async () => {
    const { version } = (await t.api('GET', '/version', { token: alice.token })).json<{ version: string }>();
    // Terraform's provider splits on dots; semver readers take the `-basalt` suffix as a pre-release tag.
    const match = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/.exec(version);
    assert.ok(match, version);
    const [major, minor] = [Number(match[1]), Number(match[2])];
    assert.ok(major === 17 && minor > 1, `${version} enables the device grant and stays on the 17.x API`);
  });
});
