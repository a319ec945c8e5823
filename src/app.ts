import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from './config/index.js';
import { ResolverRegistry, createAuthHook } from './infra/auth/index.js';
import { DomainEventBus } from './infra/bus.js';
import { systemClock, type Clock } from './infra/clock.js';
import { VersionCache, openDatabase, type DatabaseHandle } from './infra/db/index.js';
import { ServiceUnavailableError, apiErrorHandler } from './infra/errors/index.js';
import { installBodyIdleTimeout } from './infra/http/body-timeout.js';
import { installMethodNotAllowed } from './infra/http/method-not-allowed.js';
import { KnownRoutes } from './infra/http/known-routes.js';
import { sharedSchemaCompilers } from './infra/http/schema-compilers.js';
import { createRequestMetrics, registerOutboxMetrics } from './infra/http/metrics.js';
import { DomainMetricsRegistry } from './infra/http/domain-metrics.js';
import { installCookies } from './infra/http/cookies.js';
import { LoadShedder } from './infra/http/load-shed.js';
import { lazyChildLogger } from './infra/http/lazy-logger.js';
import { MemoryCounterStore, RateLimiter, RedisCounterStore, type ApiApp } from './infra/http/index.js';
import { REDACTED_LOG_PATHS, logRequest } from './infra/http/request-log.js';
import { installResponseHeaders } from './infra/http/response-headers.js';
import { JobQueue } from './infra/jobs/index.js';
import { Outbox } from './infra/outbox/index.js';
import { RequestLoad } from './infra/load.js';
import { OutboxThread } from './outbox-thread.js';
import { Mailer } from './infra/mail/index.js';
import type { ModuleRoutes, Platform } from './infra/platform.js';
import { createIdentityModule, type IdentityModule } from './modules/identity/index.js';
import { OpenApiCollector, createOperationsModule } from './modules/operations/index.js';
import { createProjectsModule, type ProjectsModule } from './modules/projects/index.js';
import { createOAuthModule, type OAuthModule } from './modules/oauth/index.js';
import { createSpamModule, type SpamModule } from './modules/spam/index.js';
import { createAlertsModule, type AlertsModule } from './modules/alerts/index.js';
import { createErrorTrackingModule, type ErrorTrackingModule } from './modules/error-tracking/index.js';
import { createNotificationsModule, type NotificationsModule } from './modules/notifications/index.js';
import { createEventsModule, type EventsModule } from './modules/events/index.js';
import { createDashboardModule } from './modules/dashboard/index.js';
import { createGitModule, type GitModule } from './modules/git/index.js';
import { createAdminModule } from './modules/admin/index.js';
import { createWebhooksModule, type WebhooksModule } from './modules/webhooks/index.js';
import { createAuditModule, type AuditModule } from './modules/audit/index.js';
import { installJsonParser } from './infra/http/json-parser.js';
import { AT_LEAST_ONE_OF, installParamCoercion } from './infra/http/params.js';
import { installRackForms, parseRackQuery, queryError } from './infra/http/rack-params.js';
import { staticRoutes } from './web/static.js';
import { installPageLayer, notFoundPage, rewritePageUrl, type PagePorts, type PageResource } from './web/index.js';

export const VERSION = '0.1.0';

export interface BuildOptions {
  /** An open database (tests share one); otherwise opened from the config. */
  database?: DatabaseHandle;
  clock?: Clock;
  logger?: FastifyServerOptions['logger'];
  /** Run the background job loop in this process (off in tests, which drain by hand). */
  startJobs?: boolean;
  /** The request count background work gives way to (the outbox's thread shares the HTTP thread's). */
  load?: RequestLoad;
  /**
   * `false`: the modules and their services only, no route registered (the `basalt` command,
   * src/cli/instance.ts). Such an app must never listen or be made ready; its owner closes the
   * database.
   */
  routes?: boolean;
}

export interface Modules {
  identity: IdentityModule;
  projects: ProjectsModule;
  oauth: OAuthModule;
  spam: SpamModule;
  alerts: AlertsModule;
  errorTracking: ErrorTrackingModule;
  notifications: NotificationsModule;
  events: EventsModule;
  git: GitModule;
  webhooks: WebhooksModule;
  audit: AuditModule;
}

declare module 'fastify' {
  interface FastifyInstance {
    platform: Platform;
    modules: Modules;
  }
}

/** TRUST_PROXY as Fastify takes it: a hop count becomes proxy-addr's function of the hop. */
function trustedProxies(trust: Config['trustProxy']): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/** Registers infra plugins, then every module; never listens (main.ts does). */
export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const known = new KnownRoutes();
  const app = Fastify({
    // `/<full_path>/-/issues` and the other page addresses nest to any depth: rewritten to one
    // parameter before routing, and only where no route answers (web/page-paths.ts).
    rewriteUrl: (raw) => rewritePageUrl(raw.url ?? '/', raw.method, (path) => known.has(path)),
    logger: options.logger ?? { level: config.logLevel, redact: { paths: REDACTED_LOG_PATHS, censor: '[FILTERED]' } },
    bodyLimit: config.bodyLimit,
    // Fastify's own two lines per request are replaced by one (infra/http/request-log.ts).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    childLoggerFactory: lazyChildLogger,
    // Query strings (and /api/v4 form bodies) are read as Rack reads them for Grape
    // (`scopes[]=api`), and params are coerced as Grape does (infra/http/params.ts).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024, querystringParser: parseRackQuery },
    // Compiled schemas are shared by the apps one process builds (infra/http/schema-compilers.ts).
    schemaController: { compilersFactory: sharedSchemaCompilers },
    ajv: {
      customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: true, useDefaults: true },
      plugins: [(ajv) => ajv.addKeyword({ keyword: AT_LEAST_ONE_OF, schemaType: 'array' })],
    },
    // Behind a reverse proxy (docs/operations.md) request.ip is the client's only for trusted proxies.
    trustProxy: trustedProxies(config.trustProxy),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();
  installBodyIdleTimeout(app.server, config.requestBodyTimeoutSeconds * 1000, app.log);

  const clock = options.clock ?? systemClock;
  const database =
    options.database ?? openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: config.sqliteFile, schema: config.databaseSchema });
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, lazyConnect: false }) : null;
  const limiter = new RateLimiter(
    redis ? new RedisCounterStore(redis, clock, `${config.redisPrefix}rl:`) : new MemoryCounterStore(clock),
    clock,
  );
  const load = options.load ?? new RequestLoad();
  const outbox = new Outbox(database.db, database.dialect, clock, app.log, {
    load,
    host: new URL(config.externalUrl).hostname,
    leaseMs: config.outboxLeaseSeconds * 1000,
    busyBatch: config.outboxBusyPerSecond,
  });
  const domainMetrics = new DomainMetricsRegistry();
  const platform: Platform = {
    config,
    database,
    db: database.db,
    clock,
    bus: new DomainEventBus(),
    resolvers: new ResolverRegistry(),
    limiter,
    jobs: new JobQueue(database.db, database.dialect, clock, app.log),
    load,
    outbox,
    mail: new Mailer(config.mail, outbox, app.log),
    log: app.log,
    metrics: domainMetrics,
  };
  app.decorate('platform', platform);
  app.decorateRequest('actor', null);

  const openapi = new OpenApiCollector();
  openapi.attach(app);
  known.watch(app);
  // The page layer's ports are the identity and projects modules', created below.
  let pagePorts: PagePorts | null = null;
  const browserRefusal = notFoundPage({
    currentUser: (request) => pagePorts?.currentUser(request) ?? Promise.resolve(null),
    csrfToken: (request, reply) => pagePorts?.csrfToken(request, reply) ?? '',
  });
  installMethodNotAllowed(app, known, browserRefusal);
  installJsonParser(app);
  await app.register(formbody, { bodyLimit: config.bodyLimit });
  installParamCoercion(app);
  installCookies(app);
  app.setErrorHandler(apiErrorHandler);
  installResponseHeaders(app, config);
  // Per-request work is kept to one hook per phase: each hook is a measurable share of a
  // cached API read (docs/perf-lab.md).
  const metrics = createRequestMetrics();
  registerOutboxMetrics(metrics.registry, () => platform.outbox.counts());
  domainMetrics.register(metrics.registry);
  limiter.onRefused = (name) => domainMetrics.increment('basalt_rate_limit_refusals_total', { limit: name });
  // What each process holds (its pool's queue) is summed across workers; what every process
  // reads from the same table (jobs) keeps one worker's value.
  domainMetrics.gauge({
    name: 'basalt_database_pool_waiting',
    help: 'Queries waiting for a database connection (PostgreSQL pool; 0 on SQLite)',
    labelNames: [],
    aggregator: 'sum',
    read: () => [{ labels: {}, value: database.poolStats().waiting }],
  });
  domainMetrics.gauge({
    name: 'basalt_jobs',
    help: 'Background jobs by kind and state (queued, running, failed)',
    labelNames: ['kind', 'state'],
    aggregator: 'max',
    read: async () => (await platform.jobs.countsByKind()).map((row) => ({ labels: { kind: row.kind, state: row.state }, value: row.n })),
  });
  app.addHook('onResponse', (request, reply, done) => {
    metrics.record(request, reply);
    logRequest(app.log, request, reply);
    done();
  });
  const shedder = new LoadShedder(config.loadShedDelayMs);
  const authenticate = createAuthHook({ config, clock, resolvers: platform.resolvers, limiter });
  app.addHook('onRequest', (request, reply) => {
    // Background work (the outbox, the audit queue's writer) gives way while requests keep coming.
    load.note();
    if (shedder.overloaded)
      return Promise.reject(new ServiceUnavailableError(5, '503 Service Unavailable - server overloaded, retry later'));
    const refused = queryError(request.query);
    return refused ? Promise.reject(refused) : authenticate(request, reply);
  });

  // Modules, each built from the platform and the modules above it. Creation order is the order
  // their bus subscribers, jobs and resolvers are registered in.
  const identity = createIdentityModule(platform, { resources: () => projects });
  const spam = createSpamModule(platform, {});
  const projects = createProjectsModule(platform, { identity, spam: spam.checker });
  const oauth = createOAuthModule(platform, { identity });
  const git = createGitModule(platform, { identity, projects });
  const errorTracking = createErrorTrackingModule(platform, { identity, projects });
  const notifications = createNotificationsModule(platform, { identity, projects });
  const events = createEventsModule(platform, { identity, projects });
  const dashboard = createDashboardModule(platform, { identity, projects, events });
  const alerts = createAlertsModule(platform, {
    identity,
    projects,
    recipients: notifications.mailer,
    settingsSections: [errorTracking.settingsSection],
  });
  const webhooks = createWebhooksModule(platform, { identity, projects, version: VERSION });
  const audit = createAuditModule(platform, { projects });
  const operations = createOperationsModule(platform, {
    version: VERSION,
    metrics: metrics.registry,
    openapi,
    overloaded: () => shedder.overloaded || database.poolStats().waiting > 50,
  });
  const admin = createAdminModule(platform, { identity, projects, oauth, git, version: VERSION });
  const modules: Modules = { identity, projects, oauth, spam, notifications, events, errorTracking, alerts, git, webhooks, audit };
  app.decorate('modules', modules);
  // The module table in creation order: both registrations below go through it in this order.
  const mounted: readonly ModuleRoutes[] = [
    identity,
    spam,
    projects,
    oauth,
    git,
    errorTracking,
    notifications,
    events,
    dashboard,
    alerts,
    webhooks,
    audit,
    operations,
    admin,
  ];

  // Registering every route costs a third of the start-up, which a command has no use for.
  if (options.routes === false) return app;

  // REST API v4: `{message}` error bodies (infra/errors apiErrorHandler).
  await app.register(
    async (api: ApiApp) => {
      installRackForms(api, config.bodyLimit);
      for (const module of mounted) module.routes(api);
    },
    { prefix: '/api/v4' },
  );
  // Pages, OAuth, ingestion and git routes live at the root; a module that needs its own
  // error format (OAuth, git) registers an encapsulated plugin with its own handler.
  staticRoutes(app);
  for (const module of mounted) await module.rootRoutes(app);
  // HTML pages: one layer decides their policy, CSRF and error pages (src/web).
  const pageResources = new VersionCache<PageResource>({
    dataVersion: (scope) => platform.database.dataVersion(scope),
    clock: platform.clock,
    ttlMs: 10_000,
    maxEntries: 5000,
    maxBytes: 5000 * 1024,
  });
  pagePorts = {
    currentUser: (request) => identity.pageAuth.currentUser(request),
    csrfToken: (request, reply) => identity.pageAuth.pageCsrf(request, reply),
    verifyCsrf: (request) => identity.pageAuth.verifyPageCsrf(request),
    project: async (request, ref, minLevel) => {
      const resolve = async () => {
        const { project, level } = await projects.lookup.project(request, ref, minLevel);
        return { row: project, level };
      };
      // A page view's project, by viewer, kept until the next commit (pageResources); refusals
      // and redirects are thrown, so never kept, and a form's POST always looks again.
      if (request.method !== 'GET') return resolve();
      return pageResources.through(`${request.actor?.user.id ?? 0}\n${minLevel}\n${ref}`, resolve, () => 1024, request);
    },
    group: async (request, ref, minLevel) => {
      const { group, level } = await projects.lookup.group(request, ref, minLevel);
      return { row: group, level };
    },
    secretKeyBase: config.secretKeyBase,
    externalUrl: config.externalUrl,
  };
  const ports = pagePorts;
  await app.register(async (web: ApiApp) => {
    installPageLayer(web, ports);
    for (const module of mounted) module.pages?.(web);
  });

  let outboxThread: OutboxThread | null = null;
  app.addHook('onReady', async () => {
    await identity.bootstrap();
    if (options.startJobs ?? config.runJobs) {
      platform.jobs.start();
      // The outbox's loop on a thread of its own (src/outbox-thread.ts), or here.
      if (config.outboxThread) {
        const thread = OutboxThread.start(config, load, app.log);
        outboxThread = thread;
        platform.outbox.forwardWakeUps(() => thread.wake());
      } else platform.outbox.start();
    }
  });
  app.addHook('onClose', async () => {
    shedder.stop();
    await platform.jobs.stop();
    await outboxThread?.stop();
    await platform.outbox.stop();
    await platform.mail.close();
    await identity.tokens.flushTouches();
    await limiter.store.close();
    if (!options.database) await database.close();
  });
  return app;
}
