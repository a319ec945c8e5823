// `npx tsx bench/duel.ts <scenario> <build A> <build B> [seconds]`: the CPU each of two builds
// spends per request of one scenario, measured at the same time. Each build is a tree compiled
// with `npx tsc -p tsconfig.bench.json --outDir <dir>` (from a checkout of the commit to compare).
// Both servers share core 0 and are loaded at once from core 1, so the machine's drift (tens of
// per cent within minutes on a shared VM) reaches both alike; runs one after the other cannot
// see a change of 5 % (docs/performance.md "Duels").
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { firstLine } from './child-output.js';
import { cpuMicros } from './cpu-time.js';

const [scenario, ...rest] = process.argv.slice(2);
const builds = rest.slice(0, 2);
const seconds = Number(rest[2] ?? 10);
if (!scenario || builds.length !== 2) {
  process.stderr.write('usage: npx tsx bench/duel.ts <scenario> <build A> <build B> [seconds]\n');
  process.exit(2);
}
const root = path.dirname(import.meta.dirname);

interface Server {
  build: string;
  dataDir: string;
  child: ChildProcess;
  port: number;
  request: unknown;
}

async function start(build: string): Promise<Server> {
  const script = path.resolve(build, 'bench', 'servers', 'basalt.js');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'basalt-duel-'));
  const child = spawn('taskset', ['-c', '0', process.execPath, '--max-semi-space-size=32', script, scenario as string], {
    cwd: root,
    env: { ...process.env, BENCH_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { port, request } = JSON.parse(await firstLine(child)) as { port: number; request: unknown };
  return { build, dataDir, child, port, request };
}

async function load(server: Server, duration: number, round: number): Promise<{ requests: number; total: number; p99: number }> {
  const options = { url: `http://127.0.0.1:${server.port}`, connections: 50, duration, request: server.request, round };
  const child = spawn(
    'taskset',
    ['-c', '1', process.execPath, '--import', 'tsx', path.join(root, 'bench', 'load.ts'), JSON.stringify(options)],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return JSON.parse(await firstLine(child)) as { requests: number; total: number; p99: number };
}

const servers = await Promise.all(builds.map(start));
try {
  await Promise.all(servers.map((server) => load(server, 3, 0)));
  const before = servers.map((server) => cpuMicros(server.child.pid as number));
  const results = await Promise.all(servers.map((server) => load(server, seconds, 1)));
  servers.forEach((server, i) => {
    const result = results[i] as { requests: number; total: number; p99: number };
    const micros = cpuMicros(server.child.pid as number) - (before[i] as number);
    process.stdout.write(
      `${server.build}: ${Math.round(result.requests)} req/s, p99 ${result.p99} ms, ${(micros / result.total).toFixed(1)} µs of CPU per request\n`,
    );
  });
} finally {
  for (const server of servers) {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}
