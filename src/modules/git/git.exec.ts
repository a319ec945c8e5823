import { spawn } from 'node:child_process';

/** The environment every git child gets: no user or system config, no prompts. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/nonexistent',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LANG: 'C',
    ...extra,
  };
}

export class GitCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} failed (${exitCode === null ? 'killed' : `exit ${exitCode}`}): ${stderr.trim().slice(0, 200)}`);
    this.name = 'GitCommandError';
  }
}

export interface RunOptions {
  cwd?: string;
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Kill the command after this long (default 10 minutes). */
  timeoutMs?: number;
  /** Largest stdout kept; more is an error (default 64 MiB). */
  maxOutput?: number;
}

/** The git processes this process runs now (commands and `git http-backend`), read by `/-/metrics`. */
export const gitProcesses = { running: 0 };

/** Counts a spawned git process until it ends; the returned function uncounts it once. */
export function countGitProcess(): () => void {
  gitProcesses.running += 1;
  let counted = true;
  return () => {
    if (!counted) return;
    counted = false;
    gitProcesses.running -= 1;
  };
}

/** Runs `git args…` (never through a shell) and resolves with its stdout. */
export function git(args: readonly string[], options: RunOptions = {}): Promise<string> {
  const maxOutput = options.maxOutput ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 600_000,
      killSignal: 'SIGKILL',
    });
    const uncount = countGitProcess();
    child.on('close', uncount);
    child.on('error', uncount);
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxOutput) child.kill('SIGKILL');
      else out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 8192) err += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0 && outBytes <= maxOutput) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new GitCommandError(args, code, outBytes > maxOutput ? 'output too large' : err));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}
