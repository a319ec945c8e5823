import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, type TestApp, type TestAppOptions } from './app.js';

export interface GitTestApp extends TestApp {
  storageDirs: { default: string; second: string };
  /** A temporary directory removed on close (work trees, HOME for git). */
  scratch: string;
}

/** The app with two repository storages, `default` and `second`, in temporary directories. */
export async function createGitTestApp(options: TestAppOptions = {}): Promise<GitTestApp> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'basalt-git-'));
  const storageDirs = { default: path.join(scratch, 'storage-default'), second: path.join(scratch, 'storage-second') };
  const t = await createTestApp({
    ...options,
    env: { STORAGES: `default=${storageDirs.default},second=${storageDirs.second}`, ...options.env },
  });
  return {
    ...t,
    storageDirs,
    scratch,
    close: async () => {
      await t.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

const execFileAsync = promisify(execFile);

export function gitTestEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: extra.HOME ?? os.tmpdir(),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Tester',
    GIT_AUTHOR_EMAIL: 'tester@example.com',
    GIT_COMMITTER_NAME: 'Tester',
    GIT_COMMITTER_EMAIL: 'tester@example.com',
    ...extra,
  };
}

/** Runs git (never blocking the event loop) with no user config; resolves with trimmed stdout. */
export async function runGit(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  const { stdout } = await execFileAsync('git', args, {
    cwd: options.cwd,
    env: gitTestEnv(options.env),
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout.trim();
}

/** A work tree with `count` commits on `main` (one file changing), for pushing or packing. */
export async function makeWorkTree(dir: string, count: number, prefix = 'commit'): Promise<string> {
  await runGit(['init', '--quiet', '--initial-branch=main', dir]);
  for (let i = 1; i <= count; i += 1) {
    await runGit(['commit', '--quiet', '--allow-empty', '-m', `${prefix} ${i}`], { cwd: dir });
  }
  return runGit(['rev-parse', 'HEAD'], { cwd: dir });
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** One pkt-line (gitprotocol-common). */
export function pkt(line: string): Buffer {
  const body = Buffer.from(line, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

export const ZERO_OID = '0'.repeat(40);

/** A receive-pack request body: the commands, a flush-pkt, then the pack of `revs` from `workTree`. */
export async function receivePackBody(
  workTree: string,
  commands: { old: string; new: string; ref: string }[],
  revs: string[],
): Promise<Buffer> {
  const lines = commands.map((c, i) => pkt(`${c.old} ${c.new} ${c.ref}${i === 0 ? '\0report-status' : ''}\n`));
  const pack = revs.length ? await packObjects(workTree, revs) : Buffer.alloc(0);
  return Buffer.concat([...lines, Buffer.from('0000'), pack]);
}

function packObjects(workTree: string, revs: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['pack-objects', '--stdout', '--revs', '--quiet'], { cwd: workTree, env: gitTestEnv() });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`pack-objects exited ${code}`))));
    child.stdin.end(`${revs.join('\n')}\n`);
  });
}
