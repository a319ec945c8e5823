import { after, before } from 'node:test';
import { createTestApp, type TestApp } from './app.js';
import { createUser, type TestUser } from './factories.js';

/** Two app instances on one database, standing for two processes; B also serves on a real socket. */
export interface TwoProcesses {
  a: TestApp;
  b: TestApp;
  /** B's base URL: requests to it arrive as I/O events, as they would from another machine. */
  bUrl: string;
  close(): Promise<void>;
}

export async function twoProcesses(): Promise<TwoProcesses> {
  const a = await createTestApp();
  const b = await createTestApp({ sameDatabaseAs: a });
  const bUrl = await b.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    a,
    b,
    bUrl,
    close: async () => {
      await b.close();
      await a.close();
    },
  };
}

/**
 * Two processes and a user on them for the enclosing `describe`: registers its `before` and
 * `after` hooks and returns the object they fill (read it inside tests, not at declaration).
 */
export function twoProcessesWithOwner(): TwoProcesses & { owner: TestUser } {
  const env = {} as TwoProcesses & { owner: TestUser };
  before(async () => {
    Object.assign(env, await twoProcesses());
    env.owner = await createUser(env.a.app);
  });
  after(() => env.close?.());
  return env;
}
