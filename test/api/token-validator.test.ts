import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { basicAuth, createGitTestApp, type GitTestApp } from '../helpers/git.js';

const SRC = path.resolve(import.meta.dirname, '..', '..', 'src');
const VALIDATOR = path.join('infra', 'auth', 'token-auth.ts');

/** Issue 18 item 10: the API and git build the actor from a token through one function. */
describe('one token validator for the API and git', () => {
  let t: GitTestApp;
  let owner: TestUser;
  let repo: string;

  before(async () => {
    t = await createGitTestApp({ env: { BASALT_IMPERSONATION_ENABLED: 'false' } });
    owner = await createUser(t.app);
    const project = await createProject(t.app, owner, { visibility: 'private' });
    await t.app.platform.jobs.drain();
    repo = `/${owner.user.username}/${project.path}.git/info/refs?service=git-upload-pack`;
  });
  after(() => t.close());

  it('only src/infra/auth/token-auth.ts looks tokens up and judges them', () => {
    // A resolver call (`accessToken(`, `oauthToken(`), destructuring the resolvers, or one of the
    // validation rules written out anywhere else would be a second validator.
    const patterns = [
      /\b(?:accessToken|oauthToken)\s*(?:\?\.)?\(/,
      /\{[^}]*\b(?:accessToken|oauthToken)\b[^}]*\}\s*=\s*[^;]*resolvers/,
      /\.expiresAt\s*(?:<=|<|>=|>)/,
      /config\.impersonationEnabled/,
    ];
    const offenders = readdirSync(SRC, { recursive: true })
      .map(String)
      .filter((file) => /\.tsx?$/.test(file) && file !== VALIDATOR)
      .filter((file) => {
        const text = readFileSync(path.join(SRC, file), 'utf8');
        return patterns.some((pattern) => pattern.test(text));
      });
    assert.deepEqual(offenders, []);
  });

  it('each refusal is the same decision on both doors, in each door’s words', async () => {
    const api = (token: string) => t.api('GET', '/user', { token });
    const git = (token: string) => t.app.inject({ method: 'GET', url: repo, headers: { authorization: basicAuth('x', token) } });

    const accepted = owner.token;
    assert.equal((await api(accepted)).statusCode, 200);
    assert.equal((await git(accepted)).statusCode, 200);

    const tomorrow = new Date(t.clock.now() + 86_400_000).toISOString().slice(0, 10);
    const brief = await t.api('POST', '/user/personal_access_tokens', {
      token: owner.token,
      body: { name: 'b', scopes: ['api'], expires_at: tomorrow },
    });
    const revoked = await t.api('POST', '/user/personal_access_tokens', { token: owner.token, body: { name: 'r', scopes: ['api'] } });
    assert.equal((await t.api('DELETE', `/personal_access_tokens/${revoked.json().id}`, { token: owner.token })).statusCode, 204);
    const impersonation = await t.api('POST', `/users/${owner.user.id}/impersonation_tokens`, { body: { name: 'i', scopes: ['api'] } });
    const blockedUser = await createUser(t.app);
    assert.equal((await t.api('POST', `/users/${blockedUser.user.id}/block`)).statusCode, 201);
    t.manual?.advance(2 * 86_400_000);

    const cases = [
      { name: 'expired', token: brief.json().token, api: 401, apiError: 'invalid_token', git: 401, gitText: /^Your token has expired\./ },
      {
        name: 'revoked',
        token: revoked.json().token,
        api: 401,
        apiError: 'invalid_token',
        git: 401,
        gitText: /^Your token has been revoked\./,
      },
      {
        name: 'impersonation off',
        token: impersonation.json().token,
        api: 401,
        apiError: 'invalid_token',
        git: 401,
        gitText: /^HTTP Basic: Access denied\./,
      },
      {
        name: 'blocked',
        token: blockedUser.token,
        api: 403,
        apiError: undefined,
        git: 403,
        gitText: /^Your account has been blocked\.\n$/,
      },
    ] as const;
    for (const c of cases) {
      const viaApi = await api(c.token);
      assert.equal(viaApi.statusCode, c.api, c.name);
      assert.equal(viaApi.json().error, c.apiError, c.name);
      const viaGit = await git(c.token);
      assert.equal(viaGit.statusCode, c.git, c.name);
      assert.match(viaGit.body, c.gitText, c.name);
    }
  });
});
