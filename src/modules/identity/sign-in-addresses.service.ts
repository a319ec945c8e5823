import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { Repository, type Database } from '../../infra/db/index.js';

/** Addresses kept per user: the most recently used ones count as known (older ones are dropped). */
export const MAX_SIGN_IN_ADDRESSES = 20;

/** The `user_sign_in_addresses` table (migration 0019). */
export class SignInAddressesRepository extends Repository {
  /** The user's addresses, most recent first: one read of the primary key's prefix. */
  list(userId: number): Promise<Array<{ ip: string; last_seen_at: number }>> {
    return this.db
      .selectFrom('user_sign_in_addresses')
      .select(['ip', 'last_seen_at'])
      .where('user_id', '=', userId)
      .orderBy('last_seen_at', 'desc')
      .limit(MAX_SIGN_IN_ADDRESSES + 1)
      .execute();
  }

  /** Records a sign-in from `ip`; `true` when this statement added the address (it was not known). */
  async touch(userId: number, ip: string, now: number): Promise<boolean> {
    const row = await this.db
      .insertInto('user_sign_in_addresses')
      .values({ user_id: userId, ip, first_seen_at: now, last_seen_at: now })
      .onConflict((oc) => oc.columns(['user_id', 'ip']).doUpdateSet({ last_seen_at: now }))
      .returning(['first_seen_at'])
      .executeTakeFirstOrThrow();
    return Number(row.first_seen_at) === now;
  }

  async forget(userId: number, ips: readonly string[]): Promise<void> {
    if (ips.length === 0) return;
    await this.db.deleteFrom('user_sign_in_addresses').where('user_id', '=', userId).where('ip', 'in', ips).execute();
  }
}

/**
 * The established product's "sign-in from a new location" mail: each password sign-in records
 * its address (one indexed read, one upsert, in one transaction), and a sign-in from an address
 * the user has not used before, when they have signed in before, publishes
 * `signed_in_from_new_address` in that transaction (the notifications module mails the user).
 * Only the newest MAX_SIGN_IN_ADDRESSES addresses are kept; a new one over the bound drops the oldest.
 */
export class SignInAddresses {
  constructor(
    private readonly db: Database,
    private readonly repo: SignInAddressesRepository,
    private readonly clock: Clock,
    private readonly bus: DomainEventBus,
  ) {}

  async record(userId: number, ip: string, userAgent: string | null): Promise<void> {
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      const repo = this.repo.on(trx);
      const known = await repo.list(userId);
      // `touch` decides "new" by the unique key, so two sign-ins at once from one new address mail once.
      if (!(await repo.touch(userId, ip, now))) return;
      const others = known.filter((row) => row.ip !== ip);
      // The first sign-in recorded has nothing to compare with: no mail.
      if (others.length === 0) return;
      await this.bus.publish({ type: 'signed_in_from_new_address', userId, ip, userAgent, at: now }, trx);
      const over = others.length + 1 - MAX_SIGN_IN_ADDRESSES;
      if (over > 0)
        await repo.forget(
          userId,
          others.slice(-over).map((row) => row.ip),
        );
    });
  }
}
