import { CliError, type CliCommand } from './command.js';
import { openConfiguredDatabase } from './instance.js';

export const migrateCommand: CliCommand = {
  name: ['migrate'],
  summary: 'Apply pending database migrations (--status: list applied and pending ones)',
  usage: 'basalt migrate [--status]',
  description:
    'The server migrates when it starts; run this during an upgrade, with the server stopped, to see the\nmigrations apply (docs/operations.md "Upgrading"). On PostgreSQL, processes migrate one at a time.',
  options: {
    status: { type: 'boolean', description: 'List every migration as applied (with its date) or pending; change nothing' },
  },
  async run(args, ctx) {
    const config = ctx.config();
    const { migrateToLatest, migrationStatus } = await import('../infra/db/index.js');
    const database = await openConfiguredDatabase(config);
    try {
      if (args.values.status === true) {
        const states = await migrationStatus(database.db, database.dialect);
        for (const state of states) {
          ctx.out(state.executedAt ? `applied  ${state.name}  ${state.executedAt.toISOString()}` : `pending  ${state.name}`);
        }
        const pending = states.filter((s) => s.executedAt === null).length;
        ctx.out(`${states.length - pending} applied, ${pending} pending`);
        return 0;
      }
      let applied: string[];
      try {
        applied = await migrateToLatest(database.db, database.dialect);
      } catch (error) {
        throw new CliError(`migration failed: ${(error as Error).message}`);
      }
      ctx.out(applied.length === 0 ? 'the database is up to date: nothing to apply' : `applied ${applied.join(', ')}`);
      return 0;
    } finally {
      await database.close().catch(() => undefined);
    }
  },
};
