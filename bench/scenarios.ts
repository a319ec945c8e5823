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

/** A call to the REST API as root, for seeding through the same paths clients use. */
async function api<T>(app: FastifyInstance, method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<T> {
  const res = await app.inject({
    method,
    url: `/api/v4${url}`,
    headers: { 'private-token': ROOT_TOKEN },
    ...(body !== undefined ? { payload: body as object } : {}),
  });
  if (res.statusCode >= 400) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
  return res.json<T>();
}

async function alertIntegration(app: FastifyInstance): Promise<{ path: string; key: string }> {
  const project = await api<{ id: number }>(app, 'POST', '/projects', { name: `alerts-${Date.now()}` });
  const integration = await api<{ url: string; token: string }>(app, 'POST', `/projects/${project.id}/alert_management/integrations`, {
    name: 'bench',
    type: 'http',
    active: true,
  });
  return { path: new URL(integration.url).pathname, key: integration.token };
}

export const scenarios: Record<string, Scenario> = {
  user: {
    title: 'GET /api/v4/user (personal token)',
    baseline: 'fastify-lookup',
    target: { ratio: 0.6, p99: 10 },
    seed: async (app) => ({ method: 'GET', path: '/api/v4/user', headers: { 'private-token': await benchUserToken(app) } }),
  },
  'alerts-new': {
    title: 'POST generic alert, a new fingerprint each time',
    baseline: 'fastify-insert',
    target: { ratio: 0.5, p99: 50 },
    seed: async (app) => {
      const { path, key } = await alertIntegration(app);
      return { method: 'POST', path, headers: { authorization: `Bearer ${key}` }, factory: { name: 'alert-new', args: {} } };
    },
  },
  'alerts-grouped': {
    title: 'POST generic alert, the same alert repeated (grouped)',
    baseline: 'fastify-insert',
    target: { ratio: 0.7, p99: 50 },
    seed: async (app) => {
      const { path, key } = await alertIntegration(app);
      return { method: 'POST', path, headers: { authorization: `Bearer ${key}` }, factory: { name: 'alert-same', args: {} } };
    },
  },
};
