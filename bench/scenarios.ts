// Scenarios measured against Basalt. Each seeds what it needs inside the server process
// and says which request to send; `factory` names a request generator in
// bench/request-factories.ts for loads whose bodies change per request.
import type { FastifyInstance } from 'fastify';
import type { TestApp } from '../test/helpers/app.js';
import { TestBrowser } from '../test/helpers/auth-browser.js';
import { issueTokens, registerApp, type TestClient } from '../test/helpers/oauth.js';
import { seedAlerts } from './alerts-seed.js';
import { seedErrors } from './errors-seed.js';

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
  /** A second comparison (issue 4: at least 2.5 times oidc-provider). */
  alsoCompare?: { baseline: string; ratio: number };
  /** Mail goes to a local SMTP server started in the server process (bench/mail-sink.ts), sent by its outbox loop. */
  mailSink?: boolean;
  seed(app: FastifyInstance): Promise<LoadRequest>;
}

const ROOT_TOKEN = 'bsp_bench-root-token-0123456789abcdef';
/** Live refresh tokens per load: one per connection (50) plus those autocannon builds ahead. */
export const REFRESH_CHAINS = 128;
/**
 * Refresh tokens to seed, one slice of REFRESH_CHAINS per load a refresh server takes in a run
 * (bench/run.ts): the warm-up, each round and the at-once measurement.
 */
export const REFRESH_TOKENS = REFRESH_CHAINS * (Number(process.env.BENCH_ROUNDS ?? 3) + 2);
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

async function alertIntegration(app: FastifyInstance): Promise<{ path: string; key: string; projectId: number }> {
  const project = await api<{ id: number }>(app, 'POST', '/projects', { name: `alerts-${Date.now()}` });
  const integration = await api<{ url: string; token: string }>(app, 'POST', `/projects/${project.id}/alert_management/integrations`, {
    name: 'bench',
    type: 'http',
    active: true,
  });
  return { path: new URL(integration.url).pathname, key: integration.token, projectId: project.id };
}

/** The test helpers' view of an app, for reusing their OAuth flow in seeding. */
function asTestApp(app: FastifyInstance): TestApp {
  return {
    app,
    api: (method: string, url: string, options: { body?: unknown } = {}) =>
      app.inject({
        method: method as 'GET',
        url: `/api/v4${url}`,
        headers: { 'private-token': ROOT_TOKEN },
        ...(options.body !== undefined ? { payload: options.body as object } : {}),
      }),
  } as unknown as TestApp;
}

/** A confidential application and `count` token pairs for root, through the real code flow. */
async function oauthTokens(
  app: FastifyInstance,
  count: number,
): Promise<{ client: TestClient; pairs: { access: string; refresh: string }[] }> {
  const t = asTestApp(app);
  const client = await registerApp(t, { scopes: 'api read_user' });
  const root = await app.modules.identity.users.findByUsername('root');
  if (!root) throw new Error('root is missing');
  const session = await app.modules.identity.sessions.create(root.id, { ip: null, userAgent: null });
  const cookie = `_service_session=${session.secret}`;
  const pairs = [];
  for (let i = 0; i < count; i += 1) {
    const tokens = await issueTokens(t, cookie, client, { scope: 'api' });
    pairs.push({ access: tokens.access_token, refresh: tokens.refresh_token });
  }
  return { client, pairs };
}

async function trackedProject(app: FastifyInstance): Promise<{ path: string }> {
  const project = await api<{ id: number }>(app, 'POST', '/projects', { name: `errors-${Date.now()}` });
  await api(app, 'PUT', `/projects/${project.id}/error_tracking/settings`, { active: true, integrated: true });
  const keys = await api<{ public_key: string }[]>(app, 'GET', `/projects/${project.id}/error_tracking/client_keys`);
  const key = keys[0]?.public_key;
  if (!key) throw new Error('no client key');
  return { path: `/errortracking/api/v1/projects/api/${project.id}/envelope/?sentry_version=7&sentry_key=${key}` };
}

/** What bench/events-prepare.ts seeded (passed by bench/run.ts as BENCH_EVENTS_SEED). */
function benchEvents(): { projectId: number; userId: number; first: number; last: number } {
  const raw = process.env.BENCH_EVENTS_SEED;
  if (!raw) throw new Error('events scenarios need BENCH_EVENTS_SEED (run them through bench/run.ts)');
  return JSON.parse(raw) as { projectId: number; userId: number; first: number; last: number };
}

/**
 * The session cookie of the seeded user who is a member of every seeded project (a Developer of
 * their group), signed in through the sign-in page as a browser does.
 */
async function seededMemberCookie(app: FastifyInstance): Promise<string> {
  const seeded = benchEvents();
  const password = 'bench-member-password';
  const user = await app.modules.identity.users.update(seeded.userId, { password });
  const browser = new TestBrowser(app);
  const res = await browser.signIn(user.username, password);
  if (!browser.cookies.has('_service_session'))
    throw new Error(`signing in as ${user.username} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
  return browser.cookieHeader();
}

export const scenarios: Record<string, Scenario> = {
  health: {
    title: 'GET /-/health (no credential, no database)',
    baseline: 'fastify',
    target: { ratio: 0.5, p99: 10 },
    seed: async () => ({ method: 'GET', path: '/-/health' }),
  },
  user: {
    title: 'GET /api/v4/user (personal token)',
    baseline: 'fastify-lookup',
    target: { ratio: 0.6, p99: 10 },
    seed: async (app) => ({ method: 'GET', path: '/api/v4/user', headers: { 'private-token': await benchUserToken(app) } }),
  },
  'oauth-token-info': {
    title: 'GET /oauth/token/info (OAuth access token)',
    baseline: 'fastify-lookup',
    target: { ratio: 0.6, p99: 10 },
    alsoCompare: { baseline: 'oidc-provider-introspect', ratio: 2.5 },
    seed: async (app) => {
      const { pairs } = await oauthTokens(app, 1);
      return { method: 'GET', path: '/oauth/token/info', headers: { authorization: `Bearer ${pairs[0]?.access ?? ''}` } };
    },
  },
  'oauth-refresh': {
    title: 'POST /oauth/token refresh_token grant (rotation)',
    baseline: 'oidc-provider-refresh',
    target: { ratio: 2.5, p99: 50 },
    seed: async (app) => {
      // One chain of refresh tokens per connection: each answer's refresh token is the next request's.
      const { client, pairs } = await oauthTokens(app, REFRESH_TOKENS);
      return {
        method: 'POST',
        path: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        factory: {
          name: 'refresh-chain',
          args: {
            clientId: client.clientId,
            secret: client.secret,
            redirectUri: client.redirectUri,
            tokens: pairs.map((p) => p.refresh),
            perRound: REFRESH_CHAINS,
          },
        },
      };
    },
  },
  'envelope-new': {
    title: 'POST Sentry envelope, a new error each time',
    baseline: 'fastify-insert',
    target: { ratio: 0.5, p99: 50 },
    seed: async (app) => ({ method: 'POST', ...(await trackedProject(app)), factory: { name: 'envelope', args: { distinct: true } } }),
  },
  'envelope-repeated': {
    title: 'POST Sentry envelope, the same error repeated',
    baseline: 'fastify-insert',
    target: { ratio: 0.5, p99: 50 },
    seed: async (app) => ({ method: 'POST', ...(await trackedProject(app)), factory: { name: 'envelope', args: { distinct: false } } }),
  },
  'events-project': {
    title: 'GET /projects/:id/events?per_page=100 (1M events)',
    baseline: 'fastify-lookup',
    target: { ratio: 0, p99: 20 },
    seed: async () => {
      const seeded = benchEvents();
      return { method: 'GET', path: `/api/v4/projects/${seeded.projectId}/events?per_page=100`, headers: { 'private-token': ROOT_TOKEN } };
    },
  },
  'events-user': {
    title: 'GET /users/:id/events with after/before (1M events)',
    baseline: 'fastify-lookup',
    target: { ratio: 0, p99: 20 },
    seed: async () => {
      const seeded = benchEvents();
      const day = 86_400_000;
      const after = new Date(seeded.last - 120 * day).toISOString().slice(0, 10);
      const before = new Date(seeded.last - 10 * day).toISOString().slice(0, 10);
      return {
        method: 'GET',
        path: `/api/v4/users/${seeded.userId}/events?after=${after}&before=${before}`,
        headers: { 'private-token': ROOT_TOKEN },
      };
    },
  },
  'events-dashboard': {
    title: 'GET / dashboard page, member of 1,000 projects (1M events)',
    baseline: 'fastify-lookup',
    target: { ratio: 0, p99: 20 },
    seed: async (app) => ({ method: 'GET', path: '/', headers: { cookie: await seededMemberCookie(app) } }),
  },
  'events-project-page': {
    title: 'GET /<full_path> project page (1M events)',
    baseline: 'fastify-lookup',
    target: { ratio: 0, p99: 20 },
    seed: async (app) => {
      const seeded = benchEvents();
      const project = await api<{ path_with_namespace: string }>(app, 'GET', `/projects/${seeded.projectId}`);
      return { method: 'GET', path: `/${project.path_with_namespace}`, headers: { cookie: await seededMemberCookie(app) } };
    },
  },
  'errors-list-page': {
    title: 'GET /<full_path>/-/error_tracking error list page (100,000 errors)',
    baseline: 'fastify-lookup',
    target: { ratio: 0, p99: 30 },
    seed: async (app) => {
      const project = await api<{ id: number; path_with_namespace: string }>(app, 'POST', '/projects', {
        name: `errors-list-${Date.now()}`,
      });
      await api(app, 'PUT', `/projects/${project.id}/error_tracking/settings`, { active: true, integrated: true });
      await seedErrors(app, project.id, Number(process.env.BENCH_ERRORS ?? 100_000));
      // Root (an administrator) reads the page through a session, as a browser does.
      const root = await app.modules.identity.users.findByUsername('root');
      if (!root) throw new Error('root is missing');
      const session = await app.modules.identity.sessions.create(root.id, { ip: null, userAgent: null });
      return {
        method: 'GET',
        path: `/${project.path_with_namespace}/-/error_tracking`,
        headers: { cookie: `_service_session=${session.secret}` },
      };
    },
  },
  'alerts-list-page': {
    title: 'GET /<full_path>/-/alert_management alert list page (100,000 alerts)',
    baseline: 'fastify-lookup',
    target: { ratio: 0, p99: 30 },
    seed: async (app) => {
      const project = await api<{ id: number; path_with_namespace: string }>(app, 'POST', '/projects', {
        name: `alerts-list-${Date.now()}`,
      });
      await seedAlerts(app, project.id, Number(process.env.BENCH_ALERTS ?? 100_000));
      // Root (an administrator) reads the page through a session, as a browser does.
      const root = await app.modules.identity.users.findByUsername('root');
      if (!root) throw new Error('root is missing');
      const session = await app.modules.identity.sessions.create(root.id, { ip: null, userAgent: null });
      return {
        method: 'GET',
        path: `/${project.path_with_namespace}/-/alert_management`,
        headers: { cookie: `_service_session=${session.secret}` },
      };
    },
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
  'alerts-new-mail': {
    title: 'POST generic alert, a new fingerprint each time, send_email on (mail to a local SMTP server)',
    baseline: 'fastify-insert',
    target: { ratio: 0.45, p99: 50 },
    // Issue 23: mail must not cost alert ingestion more than a tenth of its rate.
    alsoCompare: { baseline: 'alerts-new', ratio: 0.9 },
    mailSink: true,
    seed: async (app) => {
      const { path, key, projectId } = await alertIntegration(app);
      await api(app, 'PUT', `/projects/${projectId}/alert_management/settings`, { send_email: true });
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

/**
 * The audited paths of issue 24, measured by bench/audit-ab.ts on two servers of the same code,
 * one of them started with BENCH_AUDIT=off (bench/servers/basalt.ts): there the audit
 * subscriber writes nothing, everything else (the token, the session, the token mail's job) is
 * the same.
 */
export const auditScenarios: Record<string, { title: string; seed(app: FastifyInstance): Promise<LoadRequest> }> = {
  'audit-token-create': {
    title: 'POST /api/v4/user/personal_access_tokens (personal token)',
    seed: async (app) => ({
      method: 'POST',
      path: '/api/v4/user/personal_access_tokens',
      headers: { 'private-token': await benchUserToken(app) },
      body: JSON.stringify({ name: 'bench', scopes: ['read_api'] }),
    }),
  },
  'audit-sign-in': {
    title: 'POST /users/sign_in (password, page form, 303)',
    seed: async (app) => {
      const password = 'bench-sign-in-password';
      await app.modules.identity.users.create({ username: 'signer', name: 'Signer', email: 'signer@example.com', password });
      // The form's token is bound to the pre-session CSRF cookie, so one pair serves every request
      // (each request signs in anew: the load sends no session cookie back).
      const browser = new TestBrowser(app);
      const page = await browser.request('GET', '/users/sign_in');
      const form = new URLSearchParams({
        authenticity_token: TestBrowser.csrfOf(page.body),
        'user[login]': 'signer',
        'user[password]': password,
      });
      const request = {
        method: 'POST' as const,
        path: '/users/sign_in',
        headers: { cookie: browser.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      };
      // The load counts 303 among non-2xx answers: check once that it is the sign-in's redirect.
      const tried = await app.inject({ method: 'POST', url: request.path, headers: request.headers, payload: request.body });
      if (tried.statusCode !== 303 || tried.headers.location !== '/') throw new Error(`sign-in answered ${tried.statusCode}`);
      return request;
    },
  },
};
