// Scenarios measured against Basalt. Each seeds what it needs inside the server process
// and says which request to send; `factory` names a request generator in
// bench/request-factories.ts for loads whose bodies change per request.
import type { FastifyInstance } from 'fastify';

export interface LoadRequest {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A request generator (bench/request-factories.ts) and its arguments. */
  factory?: { name: string; args: Record<string, unknown> };
}

export interface Scenario {
  /** Shown in the table. */
  title: string;
  /** The baseline target it is compared with. */
  baseline: string;
  /** Target ratio to the baseline and p99 limit in ms (issue 9). */
  target: { ratio: number; p99: number };
  seed(app: FastifyInstance): Promise<LoadRequest>;
}

const ROOT_TOKEN = 'bsp_bench-root-token-0123456789abcdef';
export const BENCH_ROOT_TOKEN = ROOT_TOKEN;

async function benchUserToken(app: FastifyInstance): Promise<string> {
  const user = await app.modules.identity.users.create({
    username: 'bencher',
    name: 'Bencher',
    email: 'bench@example.com',
    password: 'password-123',
  });
  const { token } = await app.modules.identity.tokens.create(
    user.id,
    'personal',
    { name: 'bench', scopes: ['api'] },
    { createdById: user.id },
  );
  return token;
}

export const scenarios: Record<string, Scenario> = {
  user: {
    title: 'GET /api/v4/user (personal token)',
    baseline: 'fastify-lookup',
    target: { ratio: 0.6, p99: 10 },
    seed: async (app) => ({ method: 'GET', path: '/api/v4/user', headers: { 'private-token': await benchUserToken(app) } }),
  },
};
