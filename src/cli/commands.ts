import type { CliCommand } from './command.js';

/**
 * Every `basalt` command, in the order `basalt --help` lists them. Adding a command is one line
 * here (its file: src/cli/<subject>.command.ts, interface in src/cli/command.ts).
 */
export const commands: readonly CliCommand[] = [];
