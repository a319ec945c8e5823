// What storing audit events adds to token creation at once, measured inside one server: the server
// (bench/servers/basalt.ts with BENCH_AUDIT=toggle) switches its audit subscriber between storing
// and storing nothing about every half second while one load runs, and sums its CPU and finished
// requests per state (bench/servers/audit-toggle.ts). The cost is (CPU per request storing ÷ CPU
// per request not storing − 1). A second server switching between two identical states gives the
// null test. It resolves about ±1.5 points where two servers side by side (bench/audit-ab.ts, the
// judged figure) need 40 rounds for that, but it sees work done later (garbage collection,
// SQLite's checkpoints of the extra pages) only in part, spread over both states
// (docs/performance.md "Audit").
//
//   npx tsx bench/audit-toggle.ts [scenario] (after dist-bench is compiled: tsc -p tsconfig.bench.json)
//   BENCH_TOGGLE_SECONDS (default 40), BENCH_TOGGLE_PHASE_MS (default 500), BENCH_CONNECTIONS (50; sign-in 8).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { firstLine } from './child-output.js';
import type { LoadRequest } from './scenarios.js';
import type { ToggleReport } from './servers/audit-toggle.js';

const root = path.dirname(import.meta.dirname);
const SERVER = path.join(root, 'dist-bench', 'bench', 'servers', 'basalt.js');
const pin = os.availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

export interface ToggleResult {
  scenario: string;
  /** (storing ÷ not storing − 1) of CPU per request, in per cent, and the null test's. */
  costPct: number;
  nullPct: number;
  on: { cpuMicrosPerRequest: number; requests: number };
  off: { cpuMicrosPerRequest: number; requests: number };
  /** The same ratio for the thread that answers requests alone. */
  mainThreadCostPct: number;
  seconds: number;
  phaseMs: number;
}

function run(args: string[], core: string, env: Record<string, string>): ChildProcess {
  const options = { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] as ['ignore', 'pipe', 'inherit'] };
  return pin ? spawn('taskset', ['-c', core, process.execPath, ...args], options) : spawn(process.execPath, args, options);
}

async function load(port: number, request: LoadRequest, duration: number, round: number, connections: number): Promise<void> {
  const options = { url: `http://127.0.0.1:${port}`, connections, duration, request, round };
  const child = run(['--import', 'tsx', path.join(root, 'bench', 'load.ts'), JSON.stringify(options)], '1', {});
  await firstLine(child, (duration + 60) * 1000);
}

/** The report a toggling server prints when it stops. */
function reportOf(child: ChildProcess): Promise<ToggleReport> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout?.on('data', (chunk: Buffer) => (buffer += chunk.toString()));
    child.once('exit', () => {
      const line = buffer.split('\n').find((l) => l.startsWith('{"toggle"'));
      if (line) resolve((JSON.parse(line) as { toggle: ToggleReport }).toggle);
      else reject(new Error('the server printed no toggle report'));
    });
  });
}

/** One server switching its audit subscriber while loaded: its per-state sums. */
async function measure(scenario: string, mode: 'toggle' | 'toggle-null', seconds: number, connections: number): Promise<ToggleReport> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `basalt-bench-${mode}-`));
  const server = run(['--max-semi-space-size=32', SERVER, scenario], '0', { BENCH_DATA_DIR: dataDir, BENCH_AUDIT: mode });
  try {
    const { port, request } = JSON.parse(await firstLine(server)) as { port: number; request: LoadRequest };
    // Warm-up (JIT, caches), then the sums start from zero.
    await load(port, request, 4, 0, connections);
    server.kill('SIGUSR1');
    await load(port, request, seconds, 1, connections);
    const report = reportOf(server);
    server.kill('SIGTERM');
    return await report;
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const perRequest = (state: ToggleReport['on']) => state.cpuMicros / Math.max(1, state.requests);
const pct = (value: number) => Math.round(value * 1000) / 10;

export async function benchAuditToggle(
  scenario = 'audit-token-create',
  seconds = Number(process.env.BENCH_TOGGLE_SECONDS ?? 40),
  // A password sign-in is tens of milliseconds of scrypt: fewer connections, as bench/audit-ab.ts gives it.
  connections = scenario === 'audit-sign-in' ? 8 : Number(process.env.BENCH_CONNECTIONS ?? 50),
): Promise<ToggleResult> {
  const shipped = await measure(scenario, 'toggle', seconds, connections);
  const identical = await measure(scenario, 'toggle-null', seconds, connections);
  return {
    scenario,
    costPct: pct(perRequest(shipped.on) / perRequest(shipped.off) - 1),
    nullPct: pct(perRequest(identical.on) / perRequest(identical.off) - 1),
    mainThreadCostPct: pct(shipped.on.mainCpuMicros / shipped.on.requests / (shipped.off.mainCpuMicros / shipped.off.requests) - 1),
    on: { cpuMicrosPerRequest: Math.round(perRequest(shipped.on) * 10) / 10, requests: shipped.on.requests },
    off: { cpuMicrosPerRequest: Math.round(perRequest(shipped.off) * 10) / 10, requests: shipped.off.requests },
    seconds,
    phaseMs: shipped.phaseMs,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await benchAuditToggle(process.argv[2]))}\n`);
}
