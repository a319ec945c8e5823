import { tokenCreateCommand } from './admin-token.command.js';
import { adminUserCommands } from './admin-user.command.js';
import { backupCommands } from './backup.command.js';
import type { CliCommand } from './command.js';
import { dbCopyCommand } from './db-copy.command.js';
import { doctorCommand } from './doctor.command.js';
import { migrateCommand } from './migrate.command.js';
import { serveCommand } from './serve.command.js';

/**
 * Every `basalt` command, in the order `basalt --help` lists them. Adding a command is one line
 * here (its file: src/cli/<subject>.command.ts, interface in src/cli/command.ts).
 */
export const commands: readonly CliCommand[] = [
  serveCommand,
  migrateCommand,
  ...adminUserCommands,
  tokenCreateCommand,
  doctorCommand,
  ...backupCommands,
  dbCopyCommand,
];
