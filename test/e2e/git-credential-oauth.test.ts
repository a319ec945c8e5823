import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import type { ProjectRow } from '../../src/modules/projects/index.js';
import { chromiumSkip, freePort, launchChromium } from '../helpers/chromium.js';
import { createProject, createUser, type TestUser } from '../helpers/factories.js';
import { createGitTestApp, gitTestEnv, runGit, type GitTestApp } from '../helpers/git.js';
import { registerApp, type TestClient } from '../helpers/oauth.js';

const HELPER = '/usr/bin/git-credential-oauth';
const skip = chromiumSkip || (existsSync(HELPER) ? false : `${HELPER} is not installed (Debian package git-credential-oauth)`);

/** git processes still running, each leading its own process group (git, its helpers, their servers). */
const running = new Set<number>();

/** Runs git with the given environment; resolves with its exit code and output (never throws). */
function git(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { cwd, env, detached: true });
    if (child.pid !== undefined) running.add(child.pid);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => {
      if (child.pid !== undefined) running.delete(child.pid);
      resolve({ code, output });
    });
  });
}

/** A failed test leaves git waiting for the browser step: end what this suite started. */
function stopRunning(): void {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

async function waitForFile(file: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(file)) {
      const text = readFileSync(file, 'utf8').trim();
      if (text) return text;
    }
    await sleep(50);
  }
  throw new Error(`${file} did not appear within ${timeoutMs} ms`);
}

/**
 * git-credential-oauth 0.4.2 (Debian 12) as git's credential helper, configured as its README
 * says for a self-hosted forge: a public application with the loopback redirect
 * `http://127.0.0.1` (the helper listens on a port it picks), its client ID and endpoints in git
 * config, and the cache helper before it. The helper "opens a browser" with `open <url>`; a
 * stand-in `open` hands the URL to Chromium, where a person signs in and approves.
 */
describe('git-credential-oauth as git’s credential helper', { skip }, () => {
  let t: GitTestApp;
  let base: string;
  let host: string;
  let browser: Browser;
  let dana: TestUser;
  let project: ProjectRow;
  let client: TestClient;
  let env: NodeJS.ProcessEnv;
  let socket: string;
  let openedUrls: string;

  before(async () => {
    const port = await freePort();
    host = `127.0.0.1:${port}`;
    base = `http://${host}`;
    t = await createGitTestApp({ manualClock: false, env: { EXTERNAL_URL: base } });
    await t.app.listen({ host: '127.0.0.1', port });
    dana = await createUser(t.app);
    project = await createProject(t.app, dana, { path: 'notes', visibility: 'private' });
    await t.app.platform.jobs.drain();
    client = await registerApp(t, {
      name: 'Git Credential OAuth',
      confidential: false,
      scopes: 'read_repository write_repository',
      redirectUri: 'http://127.0.0.1',
    });

    // The project's first commit, pushed with a personal token (not through the helper).
    const seed = path.join(t.scratch, 'seed');
    await runGit(['init', '--quiet', '--initial-branch=main', seed]);
    writeFileSync(path.join(seed, 'README.md'), '# Notes\nWritten before the OAuth flow.\n');
    await runGit(['add', 'README.md'], { cwd: seed });
    await runGit(['commit', '--quiet', '-m', 'Seed the notes'], { cwd: seed });
    await runGit(['push', '--quiet', `http://oauth2:${dana.token}@${host}/${project.full_path}.git`, 'HEAD:main'], { cwd: seed });

    // HOME for git with the helper configuration, and a stand-in `open` on PATH.
    const home = path.join(t.scratch, 'home');
    const bin = path.join(t.scratch, 'bin');
    mkdirSync(home);
    mkdirSync(bin);
    openedUrls = path.join(t.scratch, 'opened-urls');
    writeFileSync(path.join(bin, 'open'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${openedUrls}'\n`);
    chmodSync(path.join(bin, 'open'), 0o755);
    socket = path.join(t.scratch, 'credential-cache.sock');
    const gitconfig = path.join(home, '.gitconfig');
    writeFileSync(
      gitconfig,
      [
        '[credential]',
        `\thelper = cache --timeout 600 --socket ${socket}`,
        '\thelper = oauth',
        `[credential "${base}"]`,
        `\toauthClientId = ${client.clientId}`,
        '\toauthScopes = read_repository write_repository',
        '\toauthAuthURL = /oauth/authorize',
        '\toauthTokenURL = /oauth/token',
        '',
      ].join('\n'),
    );
    env = gitTestEnv({ HOME: home, GIT_CONFIG_GLOBAL: gitconfig, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` });
    browser = await launchChromium();
  });

  after(async () => {
    stopRunning();
    if (env) await git(['credential-cache', '--socket', socket, 'exit'], t.scratch, env);
    await browser?.close();
    await t?.close();
  });

  it('clones through the browser sign-in and consent, then pushes with the cached OAuth token', async () => {
    const work = path.join(t.scratch, 'clone');
    const clone = git(['clone', `${base}/${project.full_path}.git`, work], t.scratch, env);

    // The helper opens the authorization URL: our authorize endpoint, PKCE S256, its loopback redirect.
    const authorizeUrl = new URL(await waitForFile(openedUrls, 20_000));
    assert.equal(authorizeUrl.origin + authorizeUrl.pathname, `${base}/oauth/authorize`);
    assert.equal(authorizeUrl.searchParams.get('client_id'), client.clientId);
    assert.equal(authorizeUrl.searchParams.get('code_challenge_method'), 'S256');
    assert.match(authorizeUrl.searchParams.get('redirect_uri') ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);

    const page = await (await browser.newContext()).newPage();
    await page.goto(authorizeUrl.toString());
    assert.match(page.url(), /\/users\/sign_in\?redirect_to=/);
    await page.fill('#user_login', dana.user.username);
    await page.fill('#user_password', 'password-123');
    await Promise.all([page.waitForNavigation(), page.click('#new_user button[type=submit]')]);
    const consent = (await page.textContent('body')) ?? '';
    assert.equal(await page.locator('#application-name').count(), 1, `${page.url()}\n${consent}`);
    assert.equal(await page.textContent('#application-name'), 'Git Credential OAuth');
    assert.match((await page.textContent('#scopes')) ?? '', /write_repository/);
    await Promise.all([
      page.waitForURL((url) => url.toString().startsWith('http://127.0.0.1:') && !url.toString().startsWith(base)),
      page.click('#authorize'),
    ]);
    assert.match((await page.textContent('body')) ?? '', /Success/);
    await page.context().close();

    const cloned = await clone;
    assert.equal(cloned.code, 0, cloned.output);
    assert.equal(readFileSync(path.join(work, 'README.md'), 'utf8'), '# Notes\nWritten before the OAuth flow.\n');
    assert.equal(await runGit(['log', '-1', '--format=%s'], { cwd: work }), 'Seed the notes');

    // git stored what the helper returned in the cache: an OAuth access token for this application.
    const cached = await new Promise<string>((resolve) => {
      const child = spawn('git', ['credential-cache', '--socket', socket, 'get'], { env });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('close', () => resolve(out));
      child.stdin.end(`protocol=http\nhost=${host}\n\n`);
    });
    const fields = Object.fromEntries(
      cached
        .trim()
        .split('\n')
        .map((line) => line.split('=', 2) as [string, string]),
    );
    assert.equal(fields.username, 'oauth2');
    assert.match(fields.password ?? '', /^bso_/);
    const info = await fetch(`${base}/oauth/token/info`, { headers: { authorization: `Bearer ${fields.password}` } });
    assert.equal(info.status, 200);
    const tokenInfo = (await info.json()) as { application: { uid: string }; scope: string[]; resource_owner_id: number };
    assert.equal(tokenInfo.application.uid, client.clientId);
    assert.equal(tokenInfo.resource_owner_id, dana.user.id);
    assert.deepEqual([...tokenInfo.scope].sort(), ['read_repository', 'write_repository']);

    // The push asks the helpers again: the cache answers, so no second browser step.
    writeFileSync(path.join(work, 'TODO.md'), '- push with OAuth\n');
    await runGit(['add', 'TODO.md'], { cwd: work });
    await runGit(['commit', '--quiet', '-m', 'Push through the OAuth token'], { cwd: work });
    const pushed = await git(['push', 'origin', 'HEAD:main'], work, env);
    assert.equal(pushed.code, 0, pushed.output);
    assert.equal(readFileSync(openedUrls, 'utf8').trim().split('\n').length, 1, 'one browser step for clone and push');

    // The push landed: the server's main is the new commit, and the push event is Dana's.
    const head = await runGit(['rev-parse', 'HEAD'], { cwd: work });
    const remote = await runGit(['ls-remote', `http://oauth2:${dana.token}@${host}/${project.full_path}.git`, 'refs/heads/main']);
    assert.equal(remote.split('\t')[0], head);
    const events = await t.api('GET', `/projects/${project.id}/events?action=pushed`, { token: dana.token });
    const push = events
      .json()
      .find((event: { push_data: { commit_title: string } }) => event.push_data.commit_title === 'Push through the OAuth token');
    assert.ok(push, events.body);
    assert.equal(push.author_id, dana.user.id);
    assert.equal(push.push_data.ref, 'main');
  });
});
