export { Outbox, DEFAULT_MAX_ATTEMPTS, defaultBackoffMs } from './outbox.js';
export type { SendResult, OutboxItem, OutboxKind, EnqueueOptions, OutboxOptions } from './outbox.js';
