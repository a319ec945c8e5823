import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import { CliError, type CliArgs, type CliCommand, type CliContext } from './command.js';

const HELP_OPTION = { type: 'boolean', short: 'h', description: 'Show this help' } as const;

export interface RunOptions {
  readonly commands: readonly CliCommand[];
  readonly version: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

/** `basalt admin user create` … : the words before the first option or positional that name a command. */
function matchCommand(argv: readonly string[], commands: readonly CliCommand[]): CliCommand | undefined {
  let best: CliCommand | undefined;
  for (const command of commands) {
    if (command.name.every((word, i) => argv[i] === word) && (!best || command.name.length > best.name.length)) best = command;
  }
  return best;
}

/** The commands whose names start with these words (`basalt admin` lists the admin commands). */
function commandsUnder(words: readonly string[], commands: readonly CliCommand[]): CliCommand[] {
  return commands.filter((c) => words.length < c.name.length && words.every((word, i) => c.name[i] === word));
}

function commandList(commands: readonly CliCommand[]): string[] {
  const width = Math.max(...commands.map((c) => c.name.join(' ').length));
  return commands.map((c) => `  ${c.name.join(' ').padEnd(width)}  ${c.summary}`);
}

function topHelp(commands: readonly CliCommand[]): string[] {
  return [
    'Usage: basalt <command> [options]',
    '',
    'Administers a Basalt server from its own machine. It reads the same environment as the server',
    '(DATA_DIR, DATABASE_URL, STORAGES, EXTERNAL_URL, …); see docs/operations.md.',
    '',
    'Commands:',
    ...commandList(commands),
    '',
    'Options:',
    '  -h, --help     Show this help (also after any command)',
    '  -v, --version  Print the version',
  ];
}

function commandHelp(command: CliCommand): string[] {
  const options = [...Object.entries(command.options), ['help', HELP_OPTION] as const].map(([name, option]) => {
    const flag = `${option.short ? `-${option.short}, ` : '    '}--${name}${option.type === 'string' ? ` ${option.valueName ?? 'VALUE'}` : ''}`;
    return [flag, option.description] as const;
  });
  const width = Math.max(...options.map(([flag]) => flag.length));
  return [
    `Usage: ${command.usage}`,
    '',
    command.summary,
    ...(command.description ? ['', ...command.description.split('\n')] : []),
    '',
    'Options:',
    ...options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
  ];
}

function parse(command: CliCommand, argv: readonly string[]): CliArgs & { help: boolean } {
  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, option] of Object.entries(command.options)) {
    options[name] = { type: option.type, ...(option.short ? { short: option.short } : {}), ...(option.multiple ? { multiple: true } : {}) };
  }
  const name = command.name.join(' ');
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new CliError(`${name}: ${(error as Error).message.split('\n')[0]} (see basalt ${name} --help)`);
  }
  const { help, ...rest } = parsed.values;
  // Only string and boolean options are declared, so an array holds strings.
  const values = rest as CliArgs['values'];
  if (help === true) return { values, positionals: parsed.positionals, help: true };
  const expected = command.positionals ?? [];
  if (parsed.positionals.length !== expected.length) {
    const extra = parsed.positionals[expected.length];
    throw new CliError(
      extra !== undefined
        ? `${name}: unexpected argument "${extra}" (see basalt ${name} --help)`
        : `${name}: ${expected.slice(parsed.positionals.length).join(' ')} is required (see basalt ${name} --help)`,
    );
  }
  return { values, positionals: parsed.positionals, help: false };
}

/**
 * Runs one command line and returns the exit code. Nothing touches the disk before a command's
 * `run`, and `--help`, `--version` and unknown commands never reach one.
 */
export async function runCli(argv: readonly string[], options: RunOptions): Promise<number> {
  const { commands } = options;
  try {
    const first = argv[0];
    if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
      for (const line of topHelp(commands)) options.out(line);
      return first === undefined ? 1 : 0;
    }
    if (first === '--version' || first === '-v' || first === 'version') {
      options.out(options.version);
      return 0;
    }
    const command = matchCommand(argv, commands);
    if (!command) {
      const firstOption = argv.findIndex((a) => a.startsWith('-'));
      const words = firstOption === -1 ? [...argv] : argv.slice(0, firstOption);
      const under = commandsUnder(words, commands);
      const wantsHelp = argv.includes('--help') || argv.includes('-h');
      if (under.length > 0 && (wantsHelp || words.length === argv.length)) {
        const lines = [`Usage: basalt ${words.join(' ')} <command> [options]`, '', 'Commands:', ...commandList(under)];
        for (const line of lines) (wantsHelp ? options.out : options.err)(line);
        return wantsHelp ? 0 : 1;
      }
      throw new CliError(`unknown command "${words.join(' ') || first}" (see basalt --help)`);
    }
    const args = parse(command, argv.slice(command.name.length));
    if (args.help) {
      for (const line of commandHelp(command)) options.out(line);
      return 0;
    }
    let config: Config | undefined;
    const ctx: CliContext = {
      env: options.env,
      version: options.version,
      config: () => {
        if (config) return config;
        try {
          config = loadConfig(options.env);
        } catch (error) {
          if (error instanceof ConfigError) throw new CliError(`invalid configuration: ${error.problems.join('; ')}`);
          throw error;
        }
        return config;
      },
      out: options.out,
      err: options.err,
    };
    return await command.run({ values: args.values, positionals: args.positionals }, ctx);
  } catch (error) {
    if (error instanceof CliError) {
      options.err(`basalt: ${error.message}`);
      return error.exitCode;
    }
    throw error;
  }
}
