import { auditEntry, type AuditEntry } from '../../infra/audit.js';
import type { Actor } from '../../infra/auth/index.js';
import type { DomainEventOf } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { gatherForCommit, type Executor } from '../../infra/db/index.js';
import type { DomainMetrics } from '../../infra/domain-metrics.js';
import { NotFoundError } from '../../infra/errors/index.js';
import type { Page } from '../../infra/http/index.js';
import { AuditRepository, type AuditEventRow, type AuditFilter } from './audit.repository.js';

const DAY_MS = 86_400_000;
const DONE = Promise.resolve();
/** The commit buffer's key for a shared commit's audit events. */
const SETS_KEY = 'audit_event_sets';
const RETENTION_BATCH = 1000;
/**
 * Sudo and impersonation-token use is recorded once per credential, acting user and hour in
 * each process: a script acting through Sudo on every request would otherwise write a row per
 * request. The map forgets everything when it reaches its cap, which costs a few more rows.
 */
const PRIVILEGED_USE_INTERVAL_MS = 3_600_000;
const PRIVILEGED_USE_KEYS = 10_000;

/** The events one list may show: every one (administrators) or one group's or project's. */
export type AuditScope = { kind: 'instance' } | { kind: 'Group' | 'Project'; id: number };

/**
 * The audit trail. Services publish `audited` on the bus inside the transaction of their
 * change; `record` stores the event with that transaction's executor, so the event exists
 * exactly when the change does. In a shared commit (`transact`) the commit's events are gathered
 * and stored just before it commits, one row per entity; elsewhere the event's row is written at
 * once. Every read narrows its list to its scope before any filter.
 */
export class AuditService {
  private readonly privilegedUses = new Map<string, number>();

  constructor(
    private readonly events: AuditRepository,
    private readonly clock: Clock,
    private readonly metrics: DomainMetrics,
    private readonly retentionDays: number,
  ) {}

  /** The bus subscriber of `audited` events: writes each with the publisher's executor. */
  handle = (event: DomainEventOf<'audited'>, executor: Executor): Promise<void> => this.record(event.entry, executor);

  /**
   * Sudo (`sudo_used`, by the administrator, about the user acted as) or an impersonation
   * token (`impersonation_token_used`, about its user): no change to share a transaction with,
   * so written on its own, at most once per credential, user and hour (see above).
   */
  async recordPrivilegedUse(actor: Actor, ip: string, route: string, write: (entry: AuditEntry) => Promise<void>): Promise<void> {
    const now = this.clock.now();
    const key = `${actor.credential.kind}:${actor.credential.id}:${actor.sudoer?.id ?? 0}:${actor.user.id}`;
    const last = this.privilegedUses.get(key);
    if (last !== undefined && now - last < PRIVILEGED_USE_INTERVAL_MS) return;
    if (this.privilegedUses.size >= PRIVILEGED_USE_KEYS) this.privilegedUses.clear();
    this.privilegedUses.set(key, now);
    const sudo = actor.sudoer !== undefined;
    const author = actor.sudoer ?? actor.user;
    await write(
      auditEntry(
        { authorId: author.id, authorName: author.username, ipAddress: ip },
        {
          entityType: 'User',
          entityId: actor.user.id,
          entityPath: actor.user.username,
          targetType: sudo ? 'User' : 'PersonalAccessToken',
          targetId: sudo ? actor.user.id : actor.credential.id,
          targetDetails: sudo ? actor.user.username : null,
          eventName: sudo ? 'sudo_used' : 'impersonation_token_used',
          details: { credential: actor.credential.kind, first_route: route },
          at: now,
        },
      ),
    );
  }

  /**
   * In a shared commit, the entry itself joins the commit's events (encoded just before it
   * commits: publishers build each entry for its event and never change it afterwards), so the
   * commit stores them as one row per entity; otherwise it is stored at once, in the executor's
   * transaction.
   */
  record(entry: AuditEntry, executor: Executor): Promise<void> {
    if (gatherForCommit(executor, SETS_KEY, entry, this.store)) return DONE;
    return this.store(executor, [entry]);
  }

  /** Stores a transaction's events (the commit buffer's flush, or one event), then counts them. */
  private readonly store = async (executor: Executor, entries: readonly AuditEntry[]): Promise<void> => {
    await AuditRepository.store(executor, entries);
    this.counted(entries);
  };

  /**
   * Counted when stored, one addition per run of events about one kind of entity (a commit's
   * token creations: one); a transaction that then rolls back counts events that are not kept (rare).
   */
  private counted(entries: readonly AuditEntry[]): void {
    let run = 0;
    for (let i = 0; i < entries.length; i += 1) {
      run += 1;
      const type = (entries[i] as AuditEntry).entityType;
      if (entries[i + 1]?.entityType === type) continue;
      this.metrics.increment('basalt_audit_events_written_total', { entity_type: type }, run);
      run = 0;
    }
  }

  async list(scope: AuditScope, filter: AuditFilter, page: Page): Promise<{ rows: AuditEventRow[]; total: number }> {
    const narrowed = this.narrow(scope, filter);
    const rows = await this.events.page(narrowed, page.limit, page.offset);
    return { rows, total: await this.events.count(narrowed) };
  }

  /** One event of the scope; 404 for one outside it, as for one that does not exist. */
  async get(scope: AuditScope, id: number): Promise<AuditEventRow> {
    const row = await this.events.findById(id);
    if (!row || (scope.kind !== 'instance' && (row.entity_type !== scope.kind || row.entity_id !== scope.id))) {
      throw new NotFoundError('Audit Event');
    }
    return row;
  }

  /**
   * Deletes events older than the retention period, in batches of sets; how many events went. A
   * set goes when its newest event is older (its events are milliseconds apart).
   */
  async applyRetention(heartbeat: () => Promise<void>): Promise<number> {
    const cutoff = this.clock.now() - this.retentionDays * DAY_MS;
    let total = 0;
    for (;;) {
      const deleted = await this.events.deleteOlderThan(cutoff, RETENTION_BATCH);
      total += deleted.events;
      await heartbeat();
      if (deleted.sets < RETENTION_BATCH) return total;
    }
  }

  private narrow(scope: AuditScope, filter: AuditFilter): AuditFilter {
    if (scope.kind === 'instance') return filter;
    return { createdAfter: filter.createdAfter, createdBefore: filter.createdBefore, entityType: scope.kind, entityId: scope.id };
  }
}
