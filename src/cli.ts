#!/usr/bin/env node
// The `basalt` command (package.json `bin`): `npx basalt --help`. Commands live in src/cli/.
import { readFileSync } from 'node:fs';
import { commands } from './cli/commands.js';
import { runCli } from './cli/run.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

runCli(process.argv.slice(2), {
  commands,
  version,
  env: process.env,
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
}).then(
  // A command is done when it returns (`serve` never does): exit now rather than wait for a
  // database pool or timer it left open.
  (code) => process.exit(code),
  (error: unknown) => {
    // Unexpected: still one line; the stack only when asked for.
    const stack = process.env.BASALT_DEBUG && error instanceof Error ? `\n${error.stack}` : '';
    process.stderr.write(`basalt: ${error instanceof Error ? error.message : String(error)}${stack}\n`);
    process.exit(1);
  },
);
