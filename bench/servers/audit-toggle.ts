// BENCH_AUDIT=toggle (bench/audit-toggle.ts): one server switches its audit subscriber between
// storing (as shipped) and storing nothing every PHASE_MS while it is loaded, and adds up the
// process's CPU (every thread: GC helpers and SQLite's work included) and the requests finished in
// each state. Both states share the process, its heap, its compiled code and the machine's moment,
// so the drift that makes two servers differ by ±5 % from round to round reaches both alike; work
// done after its phase (collections, checkpoints) lands in either.
// BENCH_AUDIT=toggle-null switches between two identical states (both storing): the null test.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { AuditService } from '../../src/modules/audit/index.js';

const PHASE_MS = Number(process.env.BENCH_TOGGLE_PHASE_MS ?? 500);

interface State {
  cpuMicros: number;
  /** The thread that answers requests alone (Linux: /proc), the rest being GC helpers, SQLite's checkpointer, the outbox. */
  mainCpuMicros: number;
  requests: number;
  phases: number;
}

export interface ToggleReport {
  on: State;
  off: State;
  phaseMs: number;
}

/** Starts switching; SIGUSR1 zeroes the sums (after the warm-up), `report()` reads them. */
export function auditToggle(app: FastifyInstance, nullTest: boolean): { report(): ToggleReport } {
  const audit: AuditService = app.modules.audit.audit;
  const storing = audit.record.bind(audit);
  const nothing: AuditService['record'] = () => Promise.resolve();
  const sums = { on: fresh(), off: fresh() };
  let on = true;
  let requests = 0;
  let lastCpu = cpuNow();
  let lastMain = mainCpuNow();
  let lastRequests = 0;
  app.server.on('request', (_request, response) => response.once('finish', () => (requests += 1)));
  // Phases of random length (half to one and a half PHASE_MS): with a fixed length, work done on a
  // period of its own (a timer each second) would fall in the same state every time.
  const next = () => setTimeout(phaseEnds, PHASE_MS * (0.5 + Math.random())).unref();
  const phaseEnds = () => {
    const cpu = cpuNow();
    const main = mainCpuNow();
    const state = on ? sums.on : sums.off;
    state.cpuMicros += cpu - lastCpu;
    state.mainCpuMicros += main - lastMain;
    lastMain = main;
    state.requests += requests - lastRequests;
    state.phases += 1;
    lastCpu = cpu;
    lastRequests = requests;
    on = !on;
    audit.record = on || nullTest ? storing : nothing;
    next();
  };
  next();
  process.on('SIGUSR1', () => {
    sums.on = fresh();
    sums.off = fresh();
  });
  return { report: () => ({ on: sums.on, off: sums.off, phaseMs: PHASE_MS }) };
}

function fresh(): State {
  return { cpuMicros: 0, mainCpuMicros: 0, requests: 0, phases: 0 };
}

function cpuNow(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/** This thread's user and system time from /proc (clock ticks of 10 ms), 0 where there is none. */
function mainCpuNow(): number {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}
