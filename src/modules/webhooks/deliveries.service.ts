import { randomUUID } from 'node:crypto';
import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import type { SendResult } from '../../infra/outbox/index.js';
import { DeliveryClient, RESPONSE_BODY_LIMIT } from './delivery.service.js';
import { CLEARED, afterFailure, alertStatus } from './failure.rules.js';
import type { HookRow, HooksRepository } from './hooks.repository.js';
import { deliveryHeaders, type Trigger } from './payloads.rules.js';
import type { TokenSeal } from './token-seal.service.js';

/** The outbox kind every webhook delivery goes through. */
export const WEBHOOK_OUTBOX_KIND = 'webhook';

/** What one queued delivery holds: the body is built when the event happens, so every retry sends the same. */
export interface QueuedDelivery {
  hookId: number;
  trigger: Trigger;
  /** X-Gitlab-Event. */
  event: string;
  /** X-Gitlab-Event-UUID: the same for every hook the event goes to. */
  eventUuid: string;
  body: unknown;
}

/** Request bodies longer than this are logged cut (the receiver gets them whole). */
const LOGGED_REQUEST_LIMIT = 64 * 1024;

const cut = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit)}…` : text);

/**
 * Sends a delivery to its hook and records it: the log row, and the hook's failure state (a
 * success clears it, a failure counts towards disabling the hook, failure.rules.ts).
 */
export class Deliveries {
  private readonly client: DeliveryClient;

  constructor(
    private readonly db: Database,
    private readonly hooks: HooksRepository,
    private readonly clock: Clock,
    private readonly seal: TokenSeal,
    private readonly info: { version: string; instance: string; allowLocal: boolean },
  ) {
    this.client = new DeliveryClient(info.allowLocal);
  }

  /** The outbox's send for a queued delivery. A removed or disabled hook is not called. */
  async send(delivery: QueuedDelivery, idempotencyKey: string): Promise<SendResult> {
    const hook = await this.hooks.findById(delivery.hookId);
    if (!hook) return { ok: false, permanent: true, error: 'the hook was removed' };
    const now = this.clock.now();
    const status = alertStatus(hook, now);
    if (status === 'permanently_disabled') return { ok: false, permanent: true, error: 'the hook is disabled' };
    if (status === 'temporarily_disabled')
      return { ok: false, error: 'the hook is disabled for a while', retryAfterMs: (hook.disabled_until ?? now) - now };
    const outcome = await this.execute(hook, delivery, idempotencyKey, true);
    return outcome.ok ? { ok: true } : { ok: false, error: outcome.error };
  }

  /**
   * One POST, logged. `counts`: whether the outcome changes the hook's failure state (queued
   * deliveries do; a test only re-enables on success).
   */
  async execute(hook: HookRow, delivery: QueuedDelivery, idempotencyKey: string, counts: boolean) {
    const headers = deliveryHeaders({
      event: delivery.event,
      version: this.info.version,
      instance: this.info.instance,
      eventUuid: delivery.eventUuid,
      webhookUuid: hook.uuid,
      idempotencyKey,
      token: this.seal.open(hook.token_sealed),
    });
    const body = JSON.stringify(delivery.body);
    const outcome = await this.client.post({ url: hook.url, headers, body, verifyTls: hook.enable_ssl_verification === 1 });
    const now = this.clock.now();
    const loggedHeaders = { ...headers, ...(headers['X-Gitlab-Token'] ? { 'X-Gitlab-Token': '[REDACTED]' } : {}) };
    await this.db.transaction().execute(async (trx) => {
      const rows = this.hooks.on(trx);
      await rows.log({
        web_hook_id: hook.id,
        trigger: delivery.trigger,
        url: hook.url,
        request_headers: JSON.stringify(loggedHeaders),
        request_data: cut(body, LOGGED_REQUEST_LIMIT),
        response_status: outcome.status === null ? 'internal error' : String(outcome.status),
        response_headers: JSON.stringify(outcome.headers),
        response_body: cut(outcome.body, RESPONSE_BODY_LIMIT),
        execution_duration_ms: outcome.durationMs,
        internal_error_message: outcome.ok ? null : outcome.error,
        created_at: now,
      });
      if (outcome.ok) {
        const current = await rows.findById(hook.id);
        if (current && (current.recent_failures !== 0 || current.disabled_until !== null || current.permanently_disabled !== 0))
          await rows.update(hook.id, CLEARED);
      } else if (counts) {
        // Counted in one statement (deliveries to one hook fail at once); the backoff follows from the count.
        const counted = await rows.incrementFailures(hook.id);
        if (!counted) return;
        const next = afterFailure({ ...counted, recent_failures: counted.recent_failures - 1 }, now);
        if (next.disabled_until !== counted.disabled_until || next.permanently_disabled !== counted.permanently_disabled)
          await rows.update(hook.id, {
            backoff_count: next.backoff_count,
            disabled_until: next.disabled_until,
            permanently_disabled: next.permanently_disabled,
          });
      }
    });
    return outcome;
  }

  /** A test delivery, now (the test buttons and endpoint): answered with what the receiver said. */
  test(hook: HookRow, delivery: Omit<QueuedDelivery, 'hookId' | 'eventUuid'>) {
    return this.execute(hook, { ...delivery, hookId: hook.id, eventUuid: randomUUID() }, randomUUID(), false);
  }
}
