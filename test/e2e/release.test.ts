import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../helpers/chromium.js';

/**
 * The release tarball as an operator installs it: `npm run release`, unpacked in an empty
 * directory, `npm ci --omit=dev --offline` (the packages come from npm's cache, as on a machine
 * without the registry), `npx basalt serve`.
 */

const root = path.resolve(import.meta.dirname, '..', '..');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };

function run(command: string, args: readonly string[], options: SpawnSyncOptions = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 300_000, ...options });
  assert.equal(result.status, 0, `${command} ${args.join(' ')} exited ${result.status}:\n${String(result.stdout)}${String(result.stderr)}`);
  return String(result.stdout);
}

/**
 * better-sqlite3's native binary, already built for this machine, as the release file its
 * installer looks for: an offline install takes it from `npm_config_better_sqlite3_local_prebuilds`
 * instead of downloading it or compiling for minutes.
 */
function localPrebuild(dir: string): string {
  const pkg = path.join(root, 'node_modules', 'better-sqlite3');
  const sqliteVersion = (JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')) as { version: string }).version;
  const staging = path.join(dir, 'staging');
  mkdirSync(path.join(staging, 'build', 'Release'), { recursive: true });
  copyFileSync(path.join(pkg, 'build', 'Release', 'better_sqlite3.node'), path.join(staging, 'build', 'Release', 'better_sqlite3.node'));
  const prebuilds = path.join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const file = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run('tar', ['-czf', path.join(prebuilds, file), '-C', staging, 'build']);
  return prebuilds;
}

describe('the release tarball', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'basalt-release-test-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('installs with npm ci --omit=dev --offline in an empty directory and serves /-/readiness through npx basalt serve', async () => {
    run(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root });
    const out = path.join(scratch, 'out');
    const tarball = run(process.execPath, [path.join(root, 'scripts', 'release.mjs'), '--if-stale', '--out', out], { cwd: root }).trim();
    assert.equal(tarball, path.join(out, `basalt-${version}.tgz`));
    const listing = run('tar', ['-tzf', tarball]);
    for (const entry of [
      'dist/cli.js',
      'dist/main.js',
      'dist/web/basalt.css',
      'dist/web/basalt.js',
      'package.json',
      'package-lock.json',
      'README.md',
      'CHANGELOG.md',
      'docs/operations.md',
    ]) {
      assert.match(listing, new RegExp(`^basalt-${version}/${entry.replace(/\./g, '\\.')}$`, 'm'), entry);
    }
    assert.doesNotMatch(listing, /^basalt-[^/]+\/(src|test)\//m, 'no sources or tests');

    const home = path.join(scratch, 'install');
    mkdirSync(home);
    run('tar', ['-xzf', tarball, '-C', home, '--strip-components=1']);
    const env = {
      ...process.env,
      npm_config_better_sqlite3_local_prebuilds: localPrebuild(scratch),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    run('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: home, env });
    for (const dev of ['typescript', 'tsx', 'eslint', 'playwright-core']) {
      assert.equal(existsSync(path.join(home, 'node_modules', dev)), false, `${dev} is a development dependency`);
    }
    // `npm start`'s first step needs no compiler where there are no sources.
    run(process.execPath, [path.join(home, 'scripts', 'build.mjs'), '--if-stale'], { cwd: home });
    assert.equal(run('npx', ['basalt', '--version'], { cwd: home, env }).trim(), version);

    const port = await freePort();
    const dataDir = path.join(scratch, 'data');
    const server = spawn('npx', ['basalt', 'serve'], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), PORT: String(port), DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: npx runs node below it, and both are stopped together.
      detached: true,
    });
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    try {
      const listening = await Promise.race([
        new Promise<boolean>((resolve) => {
          const check = () => output.includes('Server listening') && resolve(true);
          server.stdout.on('data', check);
          check();
        }),
        exited.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 60_000).unref()),
      ]);
      assert.ok(listening, `the server did not start:\n${output}`);
      const readiness = await fetch(`http://127.0.0.1:${port}/-/readiness`);
      assert.equal(readiness.status, 200, await readiness.text());
      // The pages' stylesheet and script come from dist/web, where the build copies them.
      const signIn = await (await fetch(`http://127.0.0.1:${port}/users/sign_in`)).text();
      const scriptUrl = /<script src="([^"]+)" defer><\/script>/.exec(signIn)?.[1] ?? '(no script)';
      const script = await fetch(`http://127.0.0.1:${port}${scriptUrl}`);
      assert.equal(script.status, 200, scriptUrl);
      assert.match(await script.text(), /data-copy-target/, 'the released script, not an empty answer');
      assert.match(await (await fetch(`http://127.0.0.1:${port}/-/static/basalt.css`)).text(), /\.copy-row/);
      for (const line of output.trimEnd().split('\n')) assert.doesNotThrow(() => JSON.parse(line), line);
    } finally {
      if (server.pid !== undefined && server.exitCode === null) process.kill(-server.pid, 'SIGTERM');
      await exited;
    }
  });
});
