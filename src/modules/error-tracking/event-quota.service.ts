import type { Clock } from '../../infra/clock.js';
import type { Database } from '../../infra/db/index.js';
import { TooManyRequestsError } from '../../infra/errors/index.js';

/** How long a project's count of stored events is trusted before it is taken again from the database. */
export const QUOTA_RECOUNT_MS = 60_000;
/** Projects whose counts are kept; past it the oldest are forgotten (and counted again when they send). */
const MAX_PROJECTS = 10_000;

/**
 * Bounds the events one project stores (ERROR_TRACKING_MAX_EVENTS), so a public DSN key cannot
 * fill the disk every module writes to. Counting the project's rows on every event would put a
 * query on the hot path: the count is taken once a minute per project (an index-only count on
 * `et_events_project_event`) and this process's own stores are added to it in between. With
 * several processes, or requests racing at the bound, a project may pass the bound by what
 * arrives within one recount; the rate limits bound that.
 */
export class EventQuota {
  private readonly counts = new Map<number, { stored: number; countedAt: number }>();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly maxEvents: number,
  ) {}

  /** Throws a 429 while the project holds its maximum of events. */
  async admit(projectId: number): Promise<void> {
    const now = this.clock.now();
    let entry = this.counts.get(projectId);
    if (!entry || now - entry.countedAt >= QUOTA_RECOUNT_MS) {
      entry = { stored: await this.countStored(projectId), countedAt: now };
      this.counts.delete(projectId);
      if (this.counts.size >= MAX_PROJECTS) this.counts.delete(this.counts.keys().next().value as number);
      this.counts.set(projectId, entry);
    }
    if (entry.stored >= this.maxEvents) {
      // Nothing frees room before retention or a deletion, seen at the next recount.
      throw new TooManyRequestsError(
        (entry.countedAt + QUOTA_RECOUNT_MS - now) / 1000,
        {},
        "This project's error tracking storage is full. Try again later.",
      );
    }
  }

  /** Counts an event this process stored for the project. */
  stored(projectId: number): void {
    const entry = this.counts.get(projectId);
    if (entry) entry.stored += 1;
  }

  private async countStored(projectId: number): Promise<number> {
    const row = await this.db
      .selectFrom('error_tracking_error_events')
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}
