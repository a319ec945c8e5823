import { spawnSync } from 'node:child_process';
import { constants, accessSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { CliError, type CliCommand, type CliContext } from './command.js';
import { openConfiguredDatabase } from './instance.js';

/** `git init --initial-branch` (repository creation) arrived in git 2.28. */
const GIT_MINIMUM = [2, 28] as const;
const CONNECT_TIMEOUT_MS = 5_000;

type Outcome = 'ok' | 'warn' | 'fail' | 'skip';
interface Check {
  readonly name: string;
  readonly outcome: Outcome;
  readonly detail: string;
}

function checkGit(): Check {
  const result = spawnSync('git', ['--version'], { encoding: 'utf8', timeout: CONNECT_TIMEOUT_MS });
  if (result.error || result.status !== 0) return { name: 'git', outcome: 'fail', detail: 'git is not on PATH (needed for repositories)' };
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(result.stdout);
  const version = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  const recent = (version[0] ?? 0) > GIT_MINIMUM[0] || (version[0] === GIT_MINIMUM[0] && (version[1] ?? 0) >= GIT_MINIMUM[1]);
  const text = `${result.stdout.trim()} (${GIT_MINIMUM.join('.')} or later needed)`;
  return { name: 'git', outcome: recent ? 'ok' : 'fail', detail: text };
}

function checkStorages(config: Config): Check[] {
  return Object.entries(config.storages).map(([name, dir]) => {
    const probe = path.join(dir, `.basalt-doctor-${process.pid}`);
    try {
      writeFileSync(probe, 'probe');
      rmSync(probe);
      return { name: `storage ${name}`, outcome: 'ok', detail: `${dir} is writable` };
    } catch (error) {
      return { name: `storage ${name}`, outcome: 'fail', detail: `${dir} is not writable (${(error as Error).message})` };
    }
  });
}

async function checkDatabase(config: Config): Promise<Check> {
  const where = config.databaseUrl ? 'PostgreSQL' : `SQLite ${config.sqliteFile}`;
  let database;
  try {
    database = await openConfiguredDatabase(config);
  } catch (error) {
    return { name: 'database', outcome: 'fail', detail: `${where}: ${(error as Error).message}` };
  }
  try {
    const { migrationStatus } = await import('../infra/db/index.js');
    const states = await migrationStatus(database.db, database.dialect);
    const pending = states.filter((s) => s.executedAt === null);
    if (pending.length === 0) return { name: 'database', outcome: 'ok', detail: `${where} reachable, ${states.length} migrations applied` };
    return {
      name: 'database',
      outcome: 'fail',
      detail: `${where} reachable, ${pending.length} migration(s) pending (${pending.map((p) => p.name).join(', ')}): run basalt migrate`,
    };
  } catch (error) {
    return { name: 'database', outcome: 'fail', detail: `${where}: ${(error as Error).message}` };
  } finally {
    await database.close().catch(() => undefined);
  }
}

const LOOPBACK = /^(localhost|127(?:\.\d+){3}|\[::1\])$/;

function checkExternalUrl(config: Config, env: CliContext['env']): Check {
  const name = 'external url';
  if (!env.EXTERNAL_URL) {
    return { name, outcome: 'warn', detail: `EXTERNAL_URL is not set: links, clone URLs and OAuth redirects use ${config.externalUrl}` };
  }
  const url = new URL(config.externalUrl);
  if (LOOPBACK.test(url.hostname) && !LOOPBACK.test(config.host)) {
    return {
      name,
      outcome: 'warn',
      detail: `${config.externalUrl} names this machine's loopback while the server listens on ${config.host}`,
    };
  }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    return { name, outcome: 'warn', detail: `${config.externalUrl} is plain http: put TLS in front (docs/operations.md "TLS")` };
  }
  return { name, outcome: 'ok', detail: config.externalUrl };
}

function checkSecrets(config: Config, env: CliContext['env']): Check {
  if (env.SECRET_KEY_BASE) return { name: 'secrets', outcome: 'ok', detail: 'SECRET_KEY_BASE is set in the environment' };
  const file = path.join(config.dataDir, 'secrets.json');
  try {
    accessSync(file, constants.R_OK);
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { secretKeyBase?: unknown };
    if (typeof parsed.secretKeyBase !== 'string' || parsed.secretKeyBase.length < 32) {
      return { name: 'secrets', outcome: 'fail', detail: `${file} has no usable secretKeyBase` };
    }
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      return { name: 'secrets', outcome: 'warn', detail: `${file} is readable by others (mode ${mode.toString(8)}): chmod 600 it` };
    }
    return { name: 'secrets', outcome: 'ok', detail: `${file} is readable` };
  } catch (error) {
    return { name: 'secrets', outcome: 'fail', detail: `${file}: ${(error as Error).message}` };
  }
}

/** Whether a TCP connection opens within the timeout: the service is listening, nothing more is said to it. */
function connects(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => done(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`));
    socket.once('connect', () => done(null));
    socket.once('error', (error) => done(error.message));
  });
}

async function checkService(name: string, variable: string, raw: string | undefined, ports: Record<string, number>): Promise<Check> {
  if (!raw) return { name, outcome: 'skip', detail: `${variable} is not set` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { name, outcome: 'fail', detail: `${variable} is not a URL` };
  }
  const port = url.port ? Number(url.port) : ports[url.protocol];
  if (port === undefined) return { name, outcome: 'fail', detail: `${variable}: unknown scheme ${url.protocol}` };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const problem = await connects(host, port);
  return problem
    ? { name, outcome: 'fail', detail: `${host}:${port} is not reachable (${problem})` }
    : { name, outcome: 'ok', detail: `${host}:${port} accepts connections` };
}

export const doctorCommand: CliCommand = {
  name: ['doctor'],
  summary: 'Check the installation: git, storages, database, EXTERNAL_URL, secrets, SMTP, Redis',
  usage: 'basalt doctor',
  description:
    'One line per check: ok, warn, fail or skip. Exits 1 when a check fails. Safe while the server runs:\nit only reads, writes one probe file per storage and removes it, and opens TCP connections.',
  options: {},
  async run(_args, ctx) {
    let config: Config;
    try {
      config = ctx.config();
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      ctx.out(`fail  configuration  ${error.message}`);
      return 1;
    }
    const checks: Check[] = [
      { name: 'configuration', outcome: 'ok', detail: `DATA_DIR ${config.dataDir}` },
      checkGit(),
      ...checkStorages(config),
      await checkDatabase(config),
      checkExternalUrl(config, ctx.env),
      checkSecrets(config, ctx.env),
      // The ports nodemailer uses when SMTP_URL names none (submission with STARTTLS, or TLS).
      await checkService('smtp', 'SMTP_URL', config.mail?.smtpUrl, { 'smtp:': 587, 'smtps:': 465 }),
      await checkService('redis', 'REDIS_URL', config.redisUrl ?? undefined, { 'redis:': 6379, 'rediss:': 6379 }),
    ];
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const check of checks) ctx.out(`${check.outcome.padEnd(4)}  ${check.name.padEnd(width)}  ${check.detail}`);
    return checks.some((c) => c.outcome === 'fail') ? 1 : 0;
  },
};
