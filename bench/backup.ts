// `basalt backup create` against `tar czf` over the same files (issue 24): an instance of
// 1,000,000 events and 1,000 projects, each with a real bare repository of a few commits, must be
// backed up in under 2 × the time tar takes for its data directory (database and repositories).
// Both run as processes on the same, idle data directory, in alternating rounds; the ratio is of
// the medians. The backup is the compiled command (dist-bench/src/cli.js, built by bench/run.ts).
//
// Seeding takes a few minutes, so the data directory is kept in the system's temporary folder
// (basalt-bench-backup-<events>-<repositories>) and reused while its `seeded.json` is there.
//   npm run bench -- backup          (or `npx tsx bench/backup.ts` once dist-bench is built)
// BENCH_BACKUP_EVENTS and BENCH_BACKUP_REPOSITORIES make smaller instances; BENCH_BACKUP_ROUNDS (3).
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/index.js';
import { migrateToLatest, openDatabase } from '../src/infra/db/index.js';
import { relativeRepositoryPath } from '../src/modules/git/git.storage.js';
import { seedEvents } from './events-seed.js';

const root = path.dirname(import.meta.dirname);
const CLI = path.join(root, 'dist-bench', 'src', 'cli.js');

export interface BackupBench {
  events: number;
  repositories: number;
  /** DATA_DIR's size on disk, database and repositories. */
  dataMb: number;
  backupMs: number;
  tarMs: number;
  ratio: number;
  backupRounds: number[];
  tarRounds: number[];
  archiveMb: number;
  tarArchiveMb: number;
}

/** A bare repository of three commits, each with a few KB of its own text, written by one `git fast-import`. */
function makeRepository(dir: string, n: number): void {
  execFileSync('git', ['init', '--bare', '-q', '-b', 'main', dir]);
  const lines: string[] = [];
  for (let i = 1; i <= 3; i += 1) {
    const readme = `# Project ${n}\n\n${randomBytes(1200).toString('base64')}\n`;
    const message = `commit ${i} of project ${n}`;
    lines.push(
      'commit refs/heads/main',
      `mark :${i}`,
      `committer Bench <bench@example.com> ${1_700_000_000 + n * 10 + i} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      ...(i > 1 ? [`from :${i - 1}`] : []),
      `M 100644 inline README-${i}.md`,
      `data ${Buffer.byteLength(readme)}`,
      readme,
      '',
    );
  }
  execFileSync('git', ['-C', dir, 'fast-import', '--quiet'], { input: `${lines.join('\n')}\n` });
}

function duOf(dir: string): number {
  const out = spawnSync('du', ['-sm', dir], { encoding: 'utf8' }).stdout;
  return Number(out.split('\t')[0] ?? 0);
}

/** The seeded data directory (made once, then reused): its path and the environment that names it. */
async function seeded(events: number, repositories: number): Promise<string> {
  const dataDir = path.join(os.tmpdir(), `basalt-bench-backup-${events}-${repositories}`);
  if (existsSync(path.join(dataDir, 'seeded.json'))) return dataDir;
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  process.stderr.write(`bench: seeding ${events} events and ${repositories} repositories in ${dataDir} (once)\n`);
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const handle = openDatabase({ databaseUrl: null, sqliteFile: config.sqliteFile, schema: null });
  await migrateToLatest(handle.db, handle.dialect);
  const { projectIds } = await seedEvents(handle.db, handle.dialect, { events, projects: repositories, until: Date.now() });
  await handle.close();
  const storage = config.storages.default as string;
  for (const id of projectIds) {
    const repo = path.join(storage, relativeRepositoryPath('project', id));
    mkdirSync(path.dirname(repo), { recursive: true });
    makeRepository(repo, id);
  }
  writeFileSync(path.join(dataDir, 'seeded.json'), `${JSON.stringify({ events, repositories, at: new Date().toISOString() })}\n`);
  return dataDir;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function timed(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const started = performance.now();
  const result = spawnSync(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
  return ms;
}

export async function benchBackup(
  events = Number(process.env.BENCH_BACKUP_EVENTS ?? 1_000_000),
  repositories = Number(process.env.BENCH_BACKUP_REPOSITORIES ?? 1_000),
  rounds = Number(process.env.BENCH_BACKUP_ROUNDS ?? 3),
): Promise<BackupBench> {
  const dataDir = await seeded(events, repositories);
  // The command reads its version from the package.json beside its tree, as dist/ has it.
  copyFileSync(path.join(root, 'package.json'), path.join(root, 'dist-bench', 'package.json'));
  const out = mkdtempSync(path.join(os.tmpdir(), 'basalt-bench-backup-out-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  delete env.STORAGES;
  try {
    const tarRounds: number[] = [];
    const backupRounds: number[] = [];
    let archiveMb = 0;
    let tarArchiveMb = 0;
    // Warm the page cache for both: the first reader would otherwise pay the disk for the other.
    timed('tar', ['cf', '/dev/null', '-C', dataDir, '.']);
    for (let i = 0; i < rounds; i += 1) {
      const tarFile = path.join(out, `tar-${i}.tar.gz`);
      const backupFile = path.join(out, `backup-${i}.tar.gz`);
      const runTar = () => tarRounds.push(timed('tar', ['czf', tarFile, '-C', dataDir, '.']));
      const runBackup = () => backupRounds.push(timed(process.execPath, [CLI, 'backup', 'create', backupFile], env));
      if (i % 2 === 0) {
        runTar();
        runBackup();
      } else {
        runBackup();
        runTar();
      }
      tarArchiveMb = Math.round(statSync(tarFile).size / 1e5) / 10;
      archiveMb = Math.round(statSync(backupFile).size / 1e5) / 10;
      rmSync(tarFile);
      rmSync(backupFile);
    }
    const backupMs = Math.round(median(backupRounds));
    const tarMs = Math.round(median(tarRounds));
    return {
      events,
      repositories,
      dataMb: duOf(dataDir),
      backupMs,
      tarMs,
      ratio: Math.round((backupMs / tarMs) * 100) / 100,
      backupRounds: backupRounds.map(Math.round),
      tarRounds: tarRounds.map(Math.round),
      archiveMb,
      tarArchiveMb,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  process.stdout.write(`${JSON.stringify(await benchBackup())}\n`);
}
