export {
  PaginationQuery,
  pageOf,
  paginationHeaders,
  setPaginationHeaders,
  MAX_PER_PAGE,
  DEFAULT_PER_PAGE,
  MAX_OFFSET,
  deepestPage,
} from './pagination.js';
export type { Page, PaginationParams } from './pagination.js';
export { NamespaceOrProjectId, IntegerId } from './ids.js';
export { RateLimiter, MemoryCounterStore, RedisCounterStore } from './rate-limiter.js';
export type { Count, CounterStore, Hit, Reservation } from './rate-limiter.js';
export { enforceIngestionLimits, ingestionLimits, ingestionScope } from './ingestion-limits.js';
export type { IngestionDoor, IngestionLimits, IngestionScope } from './ingestion-limits.js';
export { checkUnmodifiedSince } from './conditional.js';
export type { ApiApp } from './types.js';
export { weakEtag } from './response-headers.js';
export { allowCors, answerPreflight, type CorsRule } from './cors.js';
export { AT_LEAST_ONE_OF, parseBooleanParam } from './params.js';
