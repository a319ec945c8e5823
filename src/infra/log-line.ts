import os from 'node:os';

/** pino's numeric levels, which every other line of the server's log carries. */
const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
export type LogLineLevel = keyof typeof LEVELS;

/**
 * One JSON log line shaped like the request logger's (pino: `level`, `time`, `pid`, `hostname`,
 * `msg`), for what the process says before Fastify's logger exists or outside it (start-up,
 * the cluster primary): an operator's log pipeline then parses every line of the server's output.
 * Errors and fatal lines go to stderr, the rest to stdout, as the request log does.
 */
export function logLine(level: LogLineLevel, msg: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level: LEVELS[level], time: Date.now(), pid: process.pid, hostname: os.hostname(), ...fields, msg });
  (LEVELS[level] >= LEVELS.error ? process.stderr : process.stdout).write(`${line}\n`);
}
