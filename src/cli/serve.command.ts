import type { CliCommand } from './command.js';

export const serveCommand: CliCommand = {
  name: ['serve'],
  summary: 'Run the server (what npm start runs): migrate, then listen on HOST:PORT',
  usage: 'basalt serve',
  description:
    'Configured by the environment only (PORT, HOST, DATA_DIR, DATABASE_URL, WORKERS, …; docs/operations.md).\nEvery line it writes is JSON. SIGTERM or SIGINT finishes the requests in flight, then exits.',
  options: {},
  async run() {
    const { runServer, serverCrashed } = await import('../server.js');
    await runServer().catch(serverCrashed);
    // The server runs until a signal ends the process: this command never returns.
    return new Promise<number>(() => undefined);
  },
};
