import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config/index.js';
import type { DomainEventBus } from './bus.js';
import type { Clock } from './clock.js';
import type { Database, DatabaseHandle } from './db/index.js';
import type { JobQueue } from './jobs/index.js';
import type { ResolverRegistry } from './auth/index.js';
import type { RateLimiter } from './http/rate-limiter.js';

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
  readonly log: FastifyBaseLogger;
}
