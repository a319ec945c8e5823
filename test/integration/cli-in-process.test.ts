import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { commands } from '../../src/cli/commands.js';
import { runCli } from '../../src/cli/run.js';
import { testSchemaName, withSchemaLock } from '../helpers/database.js';

/**
 * The `basalt` commands run in this process, through the same dispatcher as dist/cli.js, so their
 * rules are measured with the rest of src/. test/e2e/cli.test.ts and backup.test.ts run the built
 * command as an operator does, beside a running server.
 */

interface Run {
  code: number;
  out: string[];
  err: string[];
}

async function basalt(args: readonly string[], env: Record<string, string>): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { commands, version: '9.9.9', env, out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const ok = (run: Run): Run => {
  assert.equal(run.code, 0, `exit ${run.code}\n${run.out.join('\n')}\n${run.err.join('\n')}`);
  return run;
};

/** Exit 1, and the error is the last line on stderr (progress lines may come before it). */
function refused(run: Run, pattern: RegExp): void {
  assert.equal(run.code, 1, run.out.join('\n'));
  assert.match(run.err.at(-1) ?? '', pattern, run.err.join('\n'));
}

describe('basalt commands (in process)', () => {
  let scratch: string;
  let env: Record<string, string>;
  before(() => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'basalt-cli-inproc-'));
    env = { DATA_DIR: path.join(scratch, 'data'), EXTERNAL_URL: 'http://127.0.0.1:9', PATH: process.env.PATH ?? '' };
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('answers --version and --help, and refuses what it does not know, creating nothing', async () => {
    assert.deepEqual(ok(await basalt(['--version'], env)).out, ['9.9.9']);
    const help = ok(await basalt(['--help'], env)).out.join('\n');
    for (const command of ['admin user create', 'admin token create', 'backup create', 'db copy', 'doctor', 'migrate']) {
      assert.match(help, new RegExp(`^  ${command} `, 'm'));
    }
    for (const command of commands) {
      const page = ok(await basalt([...command.name, '--help'], env)).out.join('\n');
      assert.match(page, new RegExp(`^Usage: basalt ${command.name.join(' ')}`));
    }
    refused(await basalt(['frobnicate'], env), /unknown command "frobnicate"/);
    refused(await basalt(['admin', 'user', 'create', '--usernme', 'x'], env), /Unknown option '--usernme'/);
    assert.deepEqual(readdirSync(scratch), []);
  });

  it('migrates, then creates a user and a token, resets a password, blocks and makes an administrator', async () => {
    const status = ok(await basalt(['migrate', '--status'], env)).out.join('\n');
    assert.match(status, /pending\s+0001_core/);
    refused(await basalt(['admin', 'user', 'create', '--username', 'ada', '--email', 'ada@example.com'], env), /pending migration/);
    ok(await basalt(['migrate'], env));
    assert.doesNotMatch(ok(await basalt(['migrate', '--status'], env)).out.join('\n'), /^pending/m);

    const created = ok(await basalt(['admin', 'user', 'create', '--username', 'ada', '--email', 'ada@example.com'], env)).out.join('\n');
    assert.match(created, /ada/);
    assert.match(created, /password/i, 'a generated password is printed');
    refused(await basalt(['admin', 'user', 'create', '--username', 'ada', '--email', 'other@example.com'], env), /ada|taken|exists/i);
    const token = ok(await basalt(['admin', 'token', 'create', '--username', 'ada', '--scopes', 'api,read_user', '--name', 'deploy'], env));
    assert.match(token.out.join('\n'), /^bsp_[A-Za-z0-9_-]{20,}$/m);
    refused(await basalt(['admin', 'token', 'create', '--username', 'ada', '--scopes', 'everything'], env), /scope/i);
    refused(await basalt(['admin', 'token', 'create', '--username', 'nobody', '--scopes', 'api'], env), /nobody/);
    ok(await basalt(['admin', 'user', 'reset-password', '--username', 'ada', '--password', 'a-new-password-123'], env));
    refused(await basalt(['admin', 'user', 'reset-password', '--username', 'ada', '--password', 'short'], env), /password/i);
    for (const word of ['block', 'unblock', 'make-admin']) ok(await basalt(['admin', 'user', word, '--username', 'ada'], env));
  });

  it('doctor checks git, storages, the database, the external URL and secrets, one line each', async () => {
    const run = await basalt(['doctor'], { ...env, SMTP_URL: 'smtp://127.0.0.1:9', EMAIL_FROM: 'Basalt <basalt@example.com>' });
    const text = run.out.join('\n');
    for (const check of ['git', 'database', 'smtp']) assert.match(text, new RegExp(check, 'i'));
    assert.match(text, /smtp.*(fail|not reachable)/i, 'nothing listens on port 9');
    assert.equal(run.code, 1);
  });

  it('backs up and restores into an empty directory; refuses a changed archive and a directory in use', async () => {
    const archive = path.join(scratch, 'backup.tar.gz');
    ok(await basalt(['backup', 'create', archive], env));
    refused(await basalt(['backup', 'create', archive], env), /exists/);
    const restored = { ...env, DATA_DIR: path.join(scratch, 'restored') };
    ok(await basalt(['backup', 'restore', archive], restored));
    const token = ok(await basalt(['admin', 'token', 'create', '--username', 'ada', '--scopes', 'api'], restored));
    assert.match(token.out.join('\n'), /^bsp_/m, 'the restored instance knows ada');
    refused(await basalt(['backup', 'restore', archive], restored), /empty/);
    const broken = path.join(scratch, 'broken.tar.gz');
    writeFileSync(broken, 'not an archive at all');
    refused(await basalt(['backup', 'restore', broken], { ...env, DATA_DIR: path.join(scratch, 'fresh') }), /archive|checksum|gzip/i);
  });

  it(
    'copies the SQLite database into an empty PostgreSQL schema, and refuses a second copy',
    { skip: !process.env.TEST_DATABASE_URL },
    async () => {
      const url = process.env.TEST_DATABASE_URL as string;
      const schema = testSchemaName();
      await withSchemaLock(url, (client: pg.Client) => client.query(`create schema ${schema}`));
      const target = `${url}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      try {
        const copied = ok(await basalt(['db', 'copy', '--to', target], env)).out.join('\n');
        assert.match(copied, /DATABASE_URL/);
        refused(await basalt(['db', 'copy', '--to', target], env), /empty/);
      } finally {
        await withSchemaLock(url, (client: pg.Client) => client.query(`drop schema ${schema} cascade`));
      }
    },
  );
});
