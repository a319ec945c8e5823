import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import type { DomainEventBus } from './bus.js';
import type { Clock } from './clock.js';
import type { Database, DatabaseHandle } from './db/index.js';
import type { DomainMetrics } from './domain-metrics.js';
import type { JobQueue } from './jobs/index.js';
import type { RequestLoad } from './load.js';
import type { Outbox } from './outbox/index.js';
import type { Mailer } from './mail/index.js';
import type { ResolverRegistry } from './auth/index.js';
import type { RateLimiter } from './http/rate-limiter.js';
import type { ApiApp } from './http/types.js';

/** The shared pieces every module is built with; created once by buildApp. */
export interface Platform {
  readonly config: Config;
  readonly database: DatabaseHandle;
  readonly db: Database;
  readonly clock: Clock;
  readonly bus: DomainEventBus;
  readonly resolvers: ResolverRegistry;
  readonly limiter: RateLimiter;
  readonly jobs: JobQueue;
  /** The requests this process has begun: background work gives way to them. */
  readonly load: RequestLoad;
  /** Everything that leaves the server (mail, webhooks): enqueued in the causing transaction. */
  readonly outbox: Outbox;
  /** E-mail through the outbox (nothing is queued when SMTP_URL is unset). */
  readonly mail: Mailer;
  readonly log: FastifyBaseLogger;
  /** Domain counters and gauges on `/-/metrics` (src/infra/domain-metrics.ts). */
  readonly metrics: DomainMetrics;
}

/**
 * What every module gives buildApp, which registers each module's `routes` inside the `/api/v4`
 * plugin and then each module's `rootRoutes` at the service root, in the order of its table.
 */
export interface ModuleRoutes {
  /** Routes under `/api/v4`, answering errors as `{message}` bodies. */
  routes(api: ApiApp): void;
  /**
   * Pages and protocol endpoints at the root. A module that answers errors in its own format
   * registers its own encapsulated plugin here, hence the promise.
   */
  rootRoutes(app: FastifyInstance): Promise<void>;
  /**
   * HTML pages, registered inside the page layer (src/web): each declares its page policy and
   * answers refusals as pages. Modules without pages leave it out.
   */
  pages?(web: ApiApp): void;
}

/** The routes of a module that has none of one kind. */
export const noRoutes = (): void => {};
export const noRootRoutes = async (): Promise<void> => {};
