import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  dataDir: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Builds if stale, then starts `node dist/main.js` as `npm start` does, on a free port. */
export async function startServer(env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ServerProcess> {
  const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
  const dataDir = env.DATA_DIR ?? mkdtempSync(path.join(os.tmpdir(), 'basalt-e2e-'));
  const child = spawn(process.execPath, [path.join(root, 'dist', 'main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: os.tmpdir(),
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      // A busy test machine stalls event loops for seconds; suites that test shedding set their own.
      LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${out}`)), timeoutMs);
    const check = () => {
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    child,
    url,
    dataDir,
    output: () => out,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
        child.kill(signal);
      }),
  };
}

export function runMain(env: Record<string, string>): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [path.join(root, 'dist', 'main.js')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: result.status, stderr: result.stderr };
}
