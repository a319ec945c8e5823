import { CliError, requireString, type CliCommand } from './command.js';

export const dbCopyCommand: CliCommand = {
  name: ['db', 'copy'],
  summary: 'Copy the SQLite database into an empty PostgreSQL database (moving to PostgreSQL)',
  usage: 'basalt db copy --to postgres://USER:PASSWORD@HOST/DATABASE',
  description: [
    'Stop the server first. The PostgreSQL database (or the schema its search_path selects, e.g.',
    '?options=-c%20search_path%3Dbasalt) must be empty. Its schema is built by the migrations, every',
    'table is copied in one transaction, sequences are set and row counts compared. Then set',
    'DATABASE_URL to the same URL and start the server.',
  ].join('\n'),
  options: {
    to: { type: 'string', description: 'The empty PostgreSQL database to copy into', valueName: 'URL' },
  },
  async run(args, ctx) {
    const to = requireString(args, 'to');
    const config = ctx.config();
    const { copyDatabase } = await import('./db-copy.service.js');
    const { displayUrl } = await import('./database-level.service.js');
    const report = await copyDatabase(config, to, (line) => ctx.err(line)).catch((error: unknown) => {
      if (error instanceof CliError) throw error;
      throw new CliError(`db copy failed, nothing was committed to the copy's rows: ${(error as Error).message.split('\n')[0]}`);
    });
    const rows = Object.values(report.counts).reduce((a, b) => a + b, 0);
    ctx.out(`copied ${rows} rows in ${Object.keys(report.counts).length} tables to ${displayUrl(to)} (row counts verified)`);
    ctx.out(`now set DATABASE_URL=${displayUrl(to)} (with its password) and start the server; the SQLite file is left as it was`);
    return 0;
  },
};
