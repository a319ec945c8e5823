import type { Selectable } from 'kysely';
import { Repository } from '../../infra/db/index.js';
import type { SpamLogsTable } from '../../infra/db/tables/auth.js';

export type SpamLogRow = Selectable<SpamLogsTable>;

export interface NewSpamLog {
  userId: number;
  noteableType: string;
  title: string;
  description: string;
  reason: string;
  sourceIp: string | null;
  userAgent: string | null;
  now: number;
}

export class SpamLogsRepository extends Repository {
  insert(log: NewSpamLog): Promise<SpamLogRow> {
    return this.db
      .insertInto('spam_logs')
      .values({
        user_id: log.userId,
        noteable_type: log.noteableType,
        title: log.title,
        description: log.description,
        reason: log.reason,
        source_ip: log.sourceIp,
        user_agent: log.userAgent,
        created_at: log.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findById(id: number): Promise<SpamLogRow | undefined> {
    return this.db.selectFrom('spam_logs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Marks a log verified once; `false` when another request already used it. */
  async markVerified(id: number): Promise<boolean> {
    const row = await this.db
      .updateTable('spam_logs')
      .set({ recaptcha_verified: 1 })
      .where('id', '=', id)
      .where('recaptcha_verified', '=', 0)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }
}
