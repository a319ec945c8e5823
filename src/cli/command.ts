import type { Config } from '../config/index.js';

/**
 * One `basalt` command (`basalt admin user create`, `basalt backup create`, …).
 *
 * To add a command: write `src/cli/<subject>.command.ts` exporting one or more `CliCommand`
 * values, and add them to the array in `src/cli/commands.ts` (one line). The dispatcher
 * (src/cli/run.ts) matches the longest `name` against the words of the command line, parses the
 * rest with `node:util` parseArgs using `options` (strict: an unknown option is refused), prints
 * `--help` from `summary`, `usage`, `description` and the options' `description`, and turns a
 * thrown `CliError` into one line on stderr and exit code 1.
 *
 * Rules every command follows:
 * - Nothing happens on disk before `run` (and `--help` never reaches `run`); a command that needs
 *   the server's configuration calls `ctx.config()`, which creates DATA_DIR like the server does.
 * - It never starts a server unless that is what it is for (`basalt serve`).
 * - It imports what it needs (the app, the database layer) with `await import()` inside `run`, so
 *   `basalt --help` loads none of it. `withInstance` (src/cli/instance.ts) gives the server's
 *   modules built over the configured database without listening; `openConfiguredDatabase` the
 *   database alone.
 * - It returns the exit code: 0 on success; for failure, throw `CliError` with one clear line.
 */
export interface CliCommand {
  /** The words naming the command, e.g. `['backup', 'create']`. */
  readonly name: readonly string[];
  /** One line for `basalt --help`. */
  readonly summary: string;
  /** The synopsis after `Usage:`, e.g. `basalt backup create FILE.tar.gz`. */
  readonly usage: string;
  /** Paragraphs for `basalt <command> --help` after the summary (optional). */
  readonly description?: string;
  /** parseArgs options (`--help` is added by the dispatcher); each with a line for `--help`. */
  readonly options: Readonly<Record<string, CliOption>>;
  /** Names of the positional arguments, all required (e.g. `['FILE']`); none when absent. */
  readonly positionals?: readonly string[];
  run(args: CliArgs, ctx: CliContext): Promise<number>;
}

export interface CliOption {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** What the option does, for `--help`. */
  readonly description: string;
  /** The placeholder shown in `--help` for a string option, e.g. `USERNAME`. */
  readonly valueName?: string;
}

export interface CliArgs {
  /** Option values by long name (strings, booleans, or arrays of strings when `multiple`). */
  readonly values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>;
  /** Positional arguments in order, exactly as many as `positionals` names. */
  readonly positionals: readonly string[];
}

export interface CliContext {
  /** The environment the command reads (the server's variables: DATA_DIR, DATABASE_URL, …). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Basalt's version (package.json). */
  readonly version: string;
  /**
   * The server's configuration from `env` (src/config), loaded on first call. Like the server it
   * creates DATA_DIR and the storages, so call it only once the command is going to do its work.
   * A configuration problem becomes a `CliError`.
   */
  config(): Config;
  /** Writes one line (a newline is added) to stdout: the command's result. */
  out(line: string): void;
  /** Writes one line (a newline is added) to stderr: progress and warnings. */
  err(line: string): void;
}

/** A failure the operator can act on: printed as `basalt: <message>` on one line, exit code 1. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A string option's value, or a `CliError` naming the missing option. */
export function requireString(args: CliArgs, name: string): string {
  const value = args.values[name];
  if (typeof value !== 'string' || value === '') throw new CliError(`--${name} is required (see --help)`);
  return value;
}

/** A string option's value when given, `undefined` otherwise. */
export function optionalString(args: CliArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}
