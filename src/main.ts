import { runServer, serverCrashed } from './server.js';

// `node dist/main.js` is the server alone; `basalt serve` (src/cli.ts) runs the same.
runServer().catch(serverCrashed);
