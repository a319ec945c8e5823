import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CookieJar, liveApi, livePostgres, signIn, type LiveDatabase } from '../helpers/live.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

/**
 * The built `basalt` command (dist/cli.js) as an operator runs it: a child process reading the
 * server's environment, on a temporary DATA_DIR (SQLite) and, when TEST_DATABASE_URL is set, on a
 * PostgreSQL schema, next to a server process running on the same data.
 */

const root = path.resolve(import.meta.dirname, '..', '..');
const cli = path.join(root, 'dist', 'cli.js');
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `basalt args…` with exactly `env` (and PATH, for git): no variable of the test's own leaks in. */
function basalt(args: readonly string[], env: Record<string, string>, cwd = os.tmpdir()): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const ok = (run: Run): Run => {
  assert.equal(run.code, 0, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run;
};

/** A failure is exit 1 and one line on stderr, nothing on stdout. */
function refused(run: Run, pattern: RegExp): void {
  assert.equal(run.code, 1, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  assert.equal(run.stdout, '');
  assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
  assert.match(run.stderr, /^basalt: /);
  assert.match(run.stderr, pattern);
}

before(() => {
  const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, encoding: 'utf8' });
  assert.equal(build.status, 0, `build failed: ${build.stdout}${build.stderr}`);
});

describe('basalt without a command that does work', () => {
  let scratch: string;
  before(() => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'basalt-cli-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('--version, --help and every command --help answer without creating anything on disk', async () => {
    const dataDir = path.join(scratch, 'data');
    const env = { DATA_DIR: dataDir };
    assert.equal(ok(await basalt(['--version'], env, scratch)).stdout, `${version}\n`);
    const help = ok(await basalt(['--help'], env, scratch)).stdout;
    for (const command of ['serve', 'migrate', 'admin user create', 'admin user reset-password', 'admin token create', 'doctor']) {
      assert.match(help, new RegExp(`^  ${command} `, 'm'));
    }
    const commands = [...help.matchAll(/^ {2}([a-z][a-z -]*?) {2,}/gm)].map((m) => (m[1] ?? '').split(' '));
    assert.ok(commands.length >= 9, help);
    const helps = await Promise.all(commands.map((words) => basalt([...words, '--help'], env, scratch)));
    helps.forEach((run, i) => {
      ok(run);
      assert.match(run.stdout, new RegExp(`^Usage: basalt ${(commands[i] ?? []).join(' ')}`), run.stdout);
      assert.match(run.stdout, /-h, --help/);
    });
    assert.match(ok(await basalt(['admin', '--help'], env, scratch)).stdout, /admin user block/);
    assert.deepEqual(readdirSync(scratch), [], 'no DATA_DIR, database or ./data');
  });

  it('an unknown command, an unknown option and a missing argument: exit 1, one line, nothing created', async () => {
    const env = { DATA_DIR: path.join(scratch, 'data') };
    refused(await basalt(['frobnicate'], env, scratch), /unknown command "frobnicate"/);
    refused(await basalt(['admin', 'user', 'create', '--usernme', 'x'], env, scratch), /Unknown option '--usernme'/);
    refused(await basalt(['migrate', 'now'], env, scratch), /unexpected argument "now"/);
    const bare = await basalt(['admin'], env, scratch);
    assert.equal(bare.code, 1);
    assert.match(bare.stderr, /admin user create/);
    // Without DATA_DIR the server's default is ./data: not made either.
    refused(await basalt(['nope'], {}, scratch), /unknown command/);
    assert.deepEqual(readdirSync(scratch), []);
  });
});

const backends: ('sqlite' | 'postgres')[] = ['sqlite', ...(process.env.TEST_DATABASE_URL ? (['postgres'] as const) : [])];

for (const backend of backends) {
  describe(`basalt on ${backend}, next to a running server`, () => {
    let dataDir: string;
    let live: LiveDatabase | null = null;
    let env: Record<string, string>;
    let server: ServerProcess;
    let token: string;
    let password: string;
    let aliceId: string;

    before(async () => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-cli-'));
      live = backend === 'postgres' ? await livePostgres(process.env.TEST_DATABASE_URL as string) : null;
      env = { DATA_DIR: dataDir, ...(live?.env ?? {}) };
    });

    after(async () => {
      await server?.stop();
      await live?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('migrate --status lists pending migrations by name; migrate applies them; a command on an unmigrated database is refused', async () => {
      refused(await basalt(['admin', 'user', 'block', '--username', 'x'], env), /pending migration.*run basalt migrate/);
      const before = ok(await basalt(['migrate', '--status'], env)).stdout;
      assert.match(before, /^pending {2}0001_core$/m);
      assert.match(before, /^0 applied, \d+ pending$/m);
      const applied = ok(await basalt(['migrate'], env)).stdout;
      assert.match(applied, /^applied 0001_core, 0002_auth/);
      assert.match(ok(await basalt(['migrate'], env)).stdout, /up to date/);
      const status = ok(await basalt(['migrate', '--status'], env)).stdout;
      assert.match(status, /^applied {2}0001_core {2}\d{4}-\d\d-\d\dT/m);
      assert.match(status, /^\d+ applied, 0 pending$/m);
      assert.doesNotMatch(status, /^pending/m);
      server = await startServer({ ...env, BASALT_ROOT_PASSWORD: 'root-password-123' });
    });

    it('admin user create prints a generated password; admin token create prints a token the API accepts', async () => {
      const created = ok(await basalt(['admin', 'user', 'create', '--username', 'alice', '--email', 'alice@example.com'], env));
      assert.match(created.stdout, /^created user alice \(id \d+\)$/m);
      aliceId = /\(id (\d+)\)/.exec(created.stdout)?.[1] ?? '';
      password = /^password: (\S+)$/m.exec(created.stdout)?.[1] ?? '';
      assert.ok(password.length >= 8, created.stdout);
      const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
      const mint = ['--username', 'alice', '--scopes', 'api,read_user', '--name', 'deploy', '--expires-at', expiry];
      // Independent commands at once, as several operators (or scripts) would run them. Refusals
      // that the database plays no part in are checked on SQLite only.
      const refusals = backend === 'sqlite';
      const [minted, taken, invalid, tooLate] = await Promise.all([
        basalt(['admin', 'token', 'create', ...mint], env),
        basalt(['admin', 'user', 'create', '--username', 'alice', '--email', 'other@example.com'], env),
        refusals ? basalt(['admin', 'user', 'create', '--username', 'bob', '--email', 'nope', '--password', 'short'], env) : null,
        refusals ? basalt(['admin', 'token', 'create', '--username', 'alice', '--scopes', 'api', '--expires-at', '2099-01-01'], env) : null,
      ]);
      ok(minted);
      refused(taken, /Username has already been taken/);
      if (invalid) refused(invalid, /email is invalid; password is too short/);
      if (tooLate) refused(tooLate, /expires_at must be before/);
      token = minted.stdout.trim();
      assert.match(token, /^bsp_\S+$/, 'the token alone on stdout');
      assert.match(minted.stderr, /created token "deploy"/);
      const me = await liveApi(server.url, 'GET', '/user', token);
      assert.equal(me.status, 200, me.text);
      assert.equal((me.json() as { username: string }).username, 'alice');
      const tokens = await liveApi(server.url, 'GET', '/personal_access_tokens', token);
      assert.deepEqual(
        (tokens.json() as { name: string; scopes: string[]; expires_at: string }[]).map((t) => [t.name, t.scopes, t.expires_at]),
        [['deploy', ['api', 'read_user'], expiry]],
      );
    });

    it("admin user reset-password: the new password signs in, the old one does not, and the user's sessions end", async () => {
      const jar = await signIn(server.url, 'alice', password);
      const signedIn = (cookies: CookieJar) =>
        fetch(`${server.url}/-/user_settings/profile`, { headers: { cookie: cookies.header() }, redirect: 'manual' }).then((r) => r.status);
      assert.equal(await signedIn(jar), 200);
      const reset = ok(await basalt(['admin', 'user', 'reset-password', '--username', 'ALICE'], env));
      assert.match(reset.stdout, /^password of alice changed; their sessions have ended$/m);
      const fresh = /^password: (\S+)$/m.exec(reset.stdout)?.[1] ?? '';
      assert.notEqual(fresh, password);
      assert.equal(await signedIn(jar), 302, 'the session made with the old password has ended');
      await assert.rejects(signIn(server.url, 'alice', password), /sign-in answered 401/);
      assert.equal(await signedIn(await signIn(server.url, 'alice', fresh)), 200);
      ok(await basalt(['admin', 'user', 'reset-password', '--username', 'alice', '--password', 'chosen-password-1'], env));
      assert.equal(await signedIn(await signIn(server.url, 'alice', 'chosen-password-1')), 200);
      if (backend === 'sqlite') {
        refused(await basalt(['admin', 'user', 'reset-password', '--username', 'nobody'], env), /no user named "nobody"/);
      }
    });

    it('admin user block, unblock and make-admin take effect on the running server at once', async () => {
      assert.match(ok(await basalt(['admin', 'user', 'block', '--username', 'alice'], env)).stdout, /alice is blocked/);
      assert.equal((await liveApi(server.url, 'GET', '/user', token)).status, 403);
      assert.match(ok(await basalt(['admin', 'user', 'unblock', '--username', 'alice'], env)).stdout, /alice is active/);
      assert.equal((await liveApi(server.url, 'GET', '/user', token)).status, 200);
      const before = await liveApi(server.url, 'GET', `/users/${aliceId}`, token);
      assert.equal((before.json() as { is_admin?: boolean }).is_admin, undefined, before.text);
      assert.match(ok(await basalt(['admin', 'user', 'make-admin', '--username', 'alice'], env)).stdout, /alice is an administrator/);
      // Only an administrator's token reads `is_admin` (the token cache learns of the change at once).
      const seen = await liveApi(server.url, 'GET', `/users/${aliceId}`, token);
      assert.equal((seen.json() as { is_admin?: boolean }).is_admin, true, seen.text);
    });

    it('doctor: one line per check, exit 0 on a healthy install, 1 when SMTP does not answer', async () => {
      // A listener that greets like an SMTP server; the doctor only connects and leaves.
      const smtp = net.createServer((socket) => socket.on('error', () => undefined).end('220 test ESMTP\r\n'));
      await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
      const port = (smtp.address() as net.AddressInfo).port;
      try {
        const healthy = ok(
          await basalt(['doctor'], {
            ...env,
            EXTERNAL_URL: 'https://basalt.example',
            SMTP_URL: `smtp://127.0.0.1:${port}`,
            EMAIL_FROM: 'basalt@example.com',
          }),
        );
        const lines = healthy.stdout.trimEnd().split('\n');
        assert.deepEqual(
          lines.map((l) => l.split(/\s+/).slice(0, 2).join(' ')),
          ['ok configuration', 'ok git', 'ok storage', 'ok database', 'ok external', 'ok secrets', 'ok smtp', 'skip redis'],
          healthy.stdout,
        );
        assert.match(healthy.stdout, /^ok {4}database .*reachable, \d+ migrations applied$/m);
      } finally {
        await new Promise((resolve) => smtp.close(resolve));
      }
      const broken = await basalt(['doctor'], { ...env, SMTP_URL: `smtp://127.0.0.1:${port}`, EMAIL_FROM: 'basalt@example.com' });
      assert.equal(broken.code, 1, broken.stdout);
      assert.match(broken.stdout, /^fail {2}smtp .*127\.0\.0\.1:\d+ is not reachable/m);
      assert.match(broken.stdout, /^warn {2}external url +EXTERNAL_URL is not set/m);
    });

    it('the server wrote only JSON lines, start-up included', () => {
      const lines = server.output().trimEnd().split('\n');
      assert.ok(lines.some((l) => l.includes('applied migrations') || l.includes('Server listening')));
      for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
    });
  });
}
