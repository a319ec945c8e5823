import { CliError, type CliCommand } from './command.js';

/** A failure of the work itself (a full disk, a lost connection) as the one line the dispatcher prints. */
function asCliError(error: unknown): never {
  if (error instanceof CliError) throw error;
  throw new CliError((error as Error).message.split('\n')[0] ?? String(error));
}

export const backupCreateCommand: CliCommand = {
  name: ['backup', 'create'],
  summary: 'Write the database, secrets and repositories to one .tar.gz (safe while the server runs)',
  usage: 'basalt backup create FILE.tar.gz',
  description: [
    'The archive holds the database as of one moment (SQLite: its online backup; PostgreSQL: every',
    "table read in one REPEATABLE READ snapshot), the secrets of DATA_DIR, every storage's",
    'repositories and manifest.json (version, migration level, row counts, the sha256 of every file).',
    'It is written under a temporary name and renamed when complete. Progress goes to stderr.',
  ].join('\n'),
  options: {},
  positionals: ['FILE'],
  async run(args, ctx) {
    const config = ctx.config();
    const { createBackup } = await import('./backup.service.js');
    const started = Date.now();
    const report = await createBackup(config, args.positionals[0] as string, ctx.version, (line) => ctx.err(line)).catch(asCliError);
    const files = Object.keys(report.manifest.files).length;
    ctx.out(
      `backup written to ${report.file}: ${files} files, ${(report.bytes / 1e6).toFixed(1)} MB before compression, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return 0;
  },
};

export const backupRestoreCommand: CliCommand = {
  name: ['backup', 'restore'],
  summary: 'Restore a backup into an empty DATA_DIR, empty storages and an empty database',
  usage: 'basalt backup restore FILE',
  description: [
    'Every checksum of the archive is verified before anything is written; a corrupted archive is',
    'refused. Anything already in DATA_DIR, the storages or the database is refused too. A PostgreSQL',
    'database is built by the migrations to the archived level, then filled. Start the server after.',
  ].join('\n'),
  options: {},
  positionals: ['FILE'],
  async run(args, ctx) {
    const { restoreBackup } = await import('./backup.service.js');
    const manifest = await restoreBackup({ env: ctx.env, config: () => ctx.config() }, args.positionals[0] as string, (line) =>
      ctx.err(line),
    ).catch(asCliError);
    ctx.out(`restored the backup of ${manifest.created_at} (Basalt ${manifest.basalt_version}); start the server to use it`);
    if (manifest.secret_key_base_in_environment)
      ctx.out('the archive does not hold SECRET_KEY_BASE: set the one the backed-up server used');
    return 0;
  },
};

export const backupCommands: readonly CliCommand[] = [backupCreateCommand, backupRestoreCommand];
