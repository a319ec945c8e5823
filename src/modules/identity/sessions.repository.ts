import type { Selectable } from 'kysely';
import { CompiledOnce, Repository } from '../../infra/db/index.js';
import type { SessionsTable } from '../../infra/db/tables/auth.js';
import type { UserRow } from './users.repository.js';

export type SessionRow = Selectable<SessionsTable>;

export interface SessionWithUser {
  session: SessionRow;
  user: Pick<UserRow, 'id' | 'username' | 'is_admin' | 'state' | 'bot'>;
}

// Every page view with a session cookie runs this: compiled once, as token lookups are.
const SESSION_BY_DIGEST = new CompiledOnce(1, (db, digest: string) =>
  db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('s')
    .select(['u.username as u_username', 'u.is_admin as u_is_admin', 'u.state as u_state', 'u.bot as u_bot'])
    .where('s.session_digest', '=', digest),
);

export class SessionsRepository extends Repository {
  insert(session: { digest: string; userId: number; ip: string | null; userAgent: string | null; now: number; expiresAt: number }) {
    return this.db
      .insertInto('sessions')
      .values({
        session_digest: session.digest,
        user_id: session.userId,
        ip: session.ip,
        user_agent: session.userAgent,
        created_at: session.now,
        expires_at: session.expiresAt,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** One indexed lookup by digest, joined with the owner (the same shape as token lookups). */
  async findByDigestWithUser(digest: string): Promise<SessionWithUser | undefined> {
    const row = await SESSION_BY_DIGEST.first(this.db, digest);
    if (!row) return undefined;
    const { u_username, u_is_admin, u_state, u_bot, ...session } = row;
    return { session, user: { id: session.user_id, username: u_username, is_admin: u_is_admin, state: u_state, bot: u_bot } };
  }

  async deleteByDigest(digest: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('session_digest', '=', digest).execute();
  }

  /** Moves the idle deadline forward; only ever later, so two processes touching at once agree. */
  async extend(id: number, expiresAt: number): Promise<void> {
    await this.db.updateTable('sessions').set({ expires_at: expiresAt }).where('id', '=', id).where('expires_at', '<', expiresAt).execute();
  }

  async deleteForUser(userId: number, exceptId: number | undefined): Promise<void> {
    let query = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
    await query.execute();
  }

  async deleteExpired(now: number): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  }
}
