// What auditing adds to token creation and password sign-in (issue 24: under 3 %), measured
// as an A/B in one run: two servers of the same compiled code (dist-bench, built by
// bench/run.ts), one with auditing on and one started with BENCH_AUDIT=off (its audit
// subscriber writes nothing), both up for the whole measurement. They are loaded in turn,
// round after round in the order on/off, off/on, … (so drift within a pair cancels), each
// round the same length; the result is the median over the pairs of each pair's ratio, for
// throughput and for CPU per request (user + system time of the server process, read from
// /proc, which the load generator on the other core does not disturb). Then both are loaded at
// the same time for a few rounds (as bench/run.ts measures a scenario with its baseline): the
// machine's drift, tens of per cent within minutes on a shared virtual machine, reaches both
// alike there, so the ratio of their CPU per request is the steadiest figure and the verdict's:
// `npm run bench -- audit` measures each path with either server started first and judges the
// mean of the two (FirstStarted).
//
// `npx tsx bench/audit-ab.ts` after `npm run bench -- audit` has compiled dist-bench, or through
// run.ts (`npm run bench -- audit`). BENCH_AUDIT_ROUNDS (pairs, default 7) and
// BENCH_AUDIT_DURATION (seconds per round, default 4) change the length; BENCH_AUDIT_FIRST=off
// starts the server storing nothing first.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { firstLine, onceLine } from './child-output.js';
import type { LoadResult } from './load.js';
import { cpuMicros } from './cpu-time.js';
import { auditScenarios, type LoadRequest } from './scenarios.js';

const root = path.dirname(import.meta.dirname);
const SERVER = path.join(root, 'dist-bench', 'bench', 'servers', 'basalt.js');
const pin = os.availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

interface Server {
  mode: 'on' | 'off';
  dataDir: string;
  child: ChildProcess;
  port: number;
  request: LoadRequest;
  loads: number;
  /** Requests finished, every round's. */
  served: number;
}

type Round = LoadResult;

export interface AuditPathResult {
  scenario: string;
  title: string;
  /** Which server was started first. */
  first: FirstStarted;
  /** Median over the rounds of each server. */
  on: { rps: number; p99: number; cpuMicros: number };
  off: { rps: number; p99: number; cpuMicros: number };
  /** Median over the pairs of (off ÷ on throughput − 1) and (on ÷ off CPU per request − 1), in per cent. */
  throughputCostPct: number;
  cpuCostPct: number;
  /** Median over the at-once rounds of (on ÷ off CPU per request − 1), in per cent, each counted while its load ran; every round's. */
  atOnceCpuCostPct: number;
  atOnce: number[];
  /** The at-once figure with each server's CPU counted from the load generator's launch (its start-up second included). */
  atOnceWithStartCpuCostPct: number;
  /** (on ÷ off CPU per request − 1) over the whole measurement, in per cent: every round and the gaps between them. */
  wholeRunCpuCostPct: number;
  /** Every pair's throughput cost, for the spread. */
  pairs: number[];
  rounds: number;
  seconds: number;
  non2xx: number;
}

function run(args: string[], core: string, env: Record<string, string>, flags: string[]): ChildProcess {
  const argv = [...flags, ...args];
  return pin
    ? spawn('taskset', ['-c', core, process.execPath, ...argv], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      })
    : spawn(process.execPath, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
}

/**
 * What the "on" server runs (bench/servers/basalt.ts): `on` (auditing as shipped), `off` (the null
 * test: the same build on both sides, which shows what one run resolves), `scratch` (a one-column
 * row per event instead of the audit event).
 */
const ON_MODE = process.env.BENCH_AUDIT_ON ?? 'on';

async function start(scenario: string, mode: 'on' | 'off'): Promise<Server> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `basalt-bench-audit-${mode}-`));
  const child = run([SERVER, scenario], '0', { BENCH_DATA_DIR: dataDir, BENCH_AUDIT: mode === 'on' ? ON_MODE : mode }, [
    '--max-semi-space-size=32',
  ]);
  const { port, request } = JSON.parse(await firstLine(child)) as { port: number; request: LoadRequest };
  return { mode, dataDir, child, port, request, loads: 0, served: 0 };
}

/**
 * One round of load on `server`: its CPU per request counted from the moment the generator starts
 * sending (`micros`) and from the generator's launch (`microsWithStart`, which adds what the server
 * did during the generator's second of start-up).
 */
type Measured = Round & { micros: number; microsWithStart: number };
async function load(server: Server, duration: number, connections: number): Promise<Measured> {
  const options = { url: `http://127.0.0.1:${server.port}`, connections, duration, request: server.request, round: server.loads++ };
  const pid = server.child.pid as number;
  const launched = cpuMicros(pid);
  let started = launched;
  const child = run([path.join(root, 'bench', 'load.ts'), JSON.stringify(options)], '1', {}, ['--import', 'tsx']);
  onceLine(child, 'started', () => (started = cpuMicros(pid)));
  const result = JSON.parse(await firstLine(child, (duration + 60) * 1000)) as Round;
  const after = cpuMicros(pid);
  server.served += result.total;
  const requests = Math.max(1, result.total);
  return { ...result, micros: (after - started) / requests, microsWithStart: (after - launched) / requests };
}

/** The median of the finite values (a round that finished no request has no ratio). */
const median = (values: number[]) => {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b);
  return finite[Math.floor(finite.length / 2)] ?? 0;
};
const pct = (value: number) => Math.round(value * 1000) / 10;

async function stop(server: Server): Promise<void> {
  if (server.child.exitCode === null) {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
  rmSync(server.dataDir, { recursive: true, force: true });
}

/**
 * Which server starts first. Two servers of the same build do not measure alike at once: one of
 * the two places leans dearer by 1 to 4 % over 41 rounds in null tests (docs/performance.md
 * "Audit"), so `npm run bench -- audit` measures in both orders and judges their mean.
 */
export type FirstStarted = 'on' | 'off';

export async function benchAuditPath(
  scenario: string,
  rounds = Number(process.env.BENCH_AUDIT_ROUNDS ?? 7),
  seconds = Number(process.env.BENCH_AUDIT_DURATION ?? 4),
  connections = Number(process.env.BENCH_CONNECTIONS ?? 50),
  atOnceRounds = Number(process.env.BENCH_AUDIT_AT_ONCE_ROUNDS ?? 9),
  first: FirstStarted = process.env.BENCH_AUDIT_FIRST === 'off' ? 'off' : 'on',
): Promise<AuditPathResult> {
  const definition = auditScenarios[scenario];
  if (!definition) throw new Error(`unknown audit scenario ${scenario}`);
  const offFirst = first === 'off';
  const started = await start(scenario, offFirst ? 'off' : 'on');
  const second = await start(scenario, offFirst ? 'on' : 'off');
  const servers = (offFirst ? [second, started] : [started, second]) as readonly [Server, Server];
  try {
    // Warm-up: JIT, caches, the connections' first requests.
    for (const server of servers) await load(server, 2, connections);
    const cpuAtStart = servers.map((server) => cpuMicros(server.child.pid as number));
    const servedAtStart = servers.map((server) => server.served);
    const on: Measured[] = [];
    const off: Measured[] = [];
    for (let i = 0; i < rounds; i += 1) {
      const order = i % 2 === 0 ? servers : ([servers[1], servers[0]] as const);
      for (const server of order) (server.mode === 'on' ? on : off).push(await load(server, seconds, connections));
    }
    // Both at once, each from its own load process on the other core.
    const atOnce: number[] = [];
    const atOnceWithStart: number[] = [];
    for (let i = 0; i < atOnceRounds; i += 1) {
      // Whose generator is launched first alternates too: the first gets the core alone for a moment.
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      const loads: Promise<Measured>[] = [];
      for (const at of order) loads[at] = load(servers[at] as Server, seconds, connections);
      const [a, b] = (await Promise.all(loads)) as [Measured, Measured];
      atOnce.push(a.micros / b.micros - 1);
      if (process.env.BENCH_AUDIT_TRACE)
        process.stderr.write(`at once ${i}: ${a.total} req ${a.micros.toFixed(1)} µs | ${b.total} req ${b.micros.toFixed(1)} µs\n`);
      atOnceWithStart.push(a.microsWithStart / b.microsWithStart - 1);
    }
    // The whole run: from the end of the warm-up to the end of the last round.
    const [onWhole, offWhole] = servers.map(
      (server, i) =>
        (cpuMicros(server.child.pid as number) - (cpuAtStart[i] as number)) / Math.max(1, server.served - (servedAtStart[i] as number)),
    ) as [number, number];
    const pairs = on.map((a, i) => (off[i] as Round).requests / a.requests - 1);
    const cpu = on.map((a, i) => a.micros / (off[i] as { micros: number }).micros - 1);
    const summary = (list: Measured[]) => ({
      rps: Math.round(median(list.map((r) => r.requests))),
      p99: median(list.map((r) => r.p99)),
      cpuMicros: Math.round(median(list.map((r) => r.micros))),
    });
    return {
      scenario,
      title: definition.title,
      first,
      on: summary(on),
      off: summary(off),
      throughputCostPct: pct(median(pairs)),
      cpuCostPct: pct(median(cpu)),
      atOnceCpuCostPct: pct(median(atOnce)),
      atOnce: atOnce.map(pct),
      atOnceWithStartCpuCostPct: pct(median(atOnceWithStart)),
      wholeRunCpuCostPct: pct(onWhole / offWhole - 1),
      pairs: pairs.map(pct),
      rounds,
      seconds,
      non2xx: [...on, ...off].reduce((n, r) => n + r.non2xx + r.errors, 0),
    };
  } finally {
    for (const server of servers) await stop(server);
  }
}

/**
 * Rounds, seconds, connections and rounds at once of a scenario. A password sign-in is scrypt
 * (tens of ms of a pool thread), so it gets fewer connections and longer rounds to finish enough
 * requests a round; its rounds at once agree within a few per cent, 9 are enough. Token creation's
 * drift ±5 % from round to round: 41 rounds at once resolve about ±1 point, 9 only about ±4.
 */
function lengthsOf(scenario: string): [number, number, number, number] {
  const rounds = Number(process.env.BENCH_AUDIT_ROUNDS ?? 7);
  const seconds = Number(process.env.BENCH_AUDIT_DURATION ?? 4);
  const atOnce = (fallback: number) => Number(process.env.BENCH_AUDIT_AT_ONCE_ROUNDS ?? fallback);
  return scenario === 'audit-sign-in'
    ? [Math.min(rounds, 5), seconds * 2, 8, atOnce(9)]
    : [rounds, seconds, Number(process.env.BENCH_CONNECTIONS ?? 50), atOnce(41)];
}

/** Each audited path measured twice, the server storing events started first and then second (see FirstStarted). */
export async function benchAudit(): Promise<AuditPathResult[]> {
  const results: AuditPathResult[] = [];
  for (const scenario of Object.keys(auditScenarios)) {
    for (const first of ['on', 'off'] as const) {
      process.stderr.write(`bench: ${scenario} (auditing on and off, alternating; ${first} started first)\n`);
      results.push(await benchAuditPath(scenario, ...lengthsOf(scenario), first));
    }
  }
  return results;
}

/** The judged cost of each path: the mean of its at-once figures over both start orders. */
export function auditVerdicts(results: readonly AuditPathResult[]): { scenario: string; title: string; costPct: number }[] {
  const byScenario = new Map<string, AuditPathResult[]>();
  for (const result of results) byScenario.set(result.scenario, [...(byScenario.get(result.scenario) ?? []), result]);
  return [...byScenario.values()].map((list) => ({
    scenario: (list[0] as AuditPathResult).scenario,
    title: (list[0] as AuditPathResult).title,
    costPct: pct(list.reduce((sum, r) => sum + r.atOnceCpuCostPct / 100, 0) / list.length),
  }));
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const only = process.argv.slice(2);
  const names = only.length > 0 ? only : Object.keys(auditScenarios);
  for (const name of names) process.stdout.write(`${JSON.stringify(await benchAuditPath(name, ...lengthsOf(name)))}\n`);
}
