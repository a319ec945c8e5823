import type { Generated } from 'kysely';
import type { Millis } from './core.js';

export type OutboxState = 'pending' | 'sending' | 'sent' | 'failed' | 'dead';

/**
 * Everything that leaves the server (mail, and later webhook deliveries): one row per message,
 * written in the transaction of the change that causes it (src/infra/outbox).
 */
export interface OutboxTable {
  id: Generated<number>;
  kind: string;
  /** Unique: the mail's Message-ID, so a retry after an uncertain send is recognisable. */
  message_id: string;
  /** JSON text of the kind's payload. */
  payload: string;
  state: Generated<OutboxState>;
  attempts: Generated<number>;
  next_attempt_at: Millis;
  last_error: string | null;
  /** The worker holding the item while it is `sending`, and until when. */
  lease_owner: string | null;
  lease_until: Millis | null;
  created_at: Millis;
  updated_at: Millis;
  settled_at: Millis | null;
}

export interface OutboxTables {
  outbox: OutboxTable;
}
