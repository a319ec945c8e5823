import { sql, type Selectable } from 'kysely';
import { CompiledOnce, Repository } from '../../infra/db/index.js';
import type { PersonalAccessTokensTable } from '../../infra/db/tables/core.js';
import type { UserRow } from './users.repository.js';

export type TokenRow = Selectable<PersonalAccessTokensTable>;
export type TokenKind = TokenRow['kind'];

export interface NewToken {
  userId: number;
  name: string;
  digest: string;
  kind: TokenKind;
  scopes: readonly string[];
  expiresAt: number | null;
  resourceKind?: 'project' | 'namespace';
  resourceId?: number;
  accessLevel?: number;
  createdById: number | null;
  previousTokenId?: number | null;
  now: number;
}

export type TokenState = 'active' | 'inactive';

/** Which tokens a list shows; every field given narrows it. */
export interface TokenListFilter {
  kinds?: readonly TokenKind[];
  /** One user's tokens; `null` or absent: everyone's. */
  userId?: number | null;
  resource?: { kind: 'project' | 'namespace'; id: number };
  state?: TokenState | undefined;
  /** The instant `state` is judged at. */
  now: number;
  /** Only tokens that expire before this instant (the expiry reminder's window). */
  expiringBefore?: number;
}

export interface TokenWithUser {
  token: TokenRow;
  user: Pick<UserRow, 'id' | 'username' | 'is_admin' | 'state' | 'bot'>;
}

// Every request with a personal-type token runs this (when not cached): compiled once.
const TOKEN_BY_DIGEST = new CompiledOnce(1, (db, digest: string) =>
  db
    .selectFrom('personal_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .selectAll('t')
    .select(['u.username as u_username', 'u.is_admin as u_is_admin', 'u.state as u_state', 'u.bot as u_bot'])
    .where('t.token_digest', '=', digest),
);

export class TokensRepository extends Repository {
  insert(token: NewToken): Promise<TokenRow> {
    return this.db
      .insertInto('personal_access_tokens')
      .values({
        user_id: token.userId,
        name: token.name,
        token_digest: token.digest,
        kind: token.kind,
        scopes: token.scopes.join(' '),
        expires_at: token.expiresAt,
        resource_kind: token.resourceKind ?? null,
        resource_id: token.resourceId ?? null,
        access_level: token.accessLevel ?? null,
        created_by_id: token.createdById,
        previous_token_id: token.previousTokenId ?? null,
        created_at: token.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** The hot path: one indexed lookup by digest, joined with the owner. */
  async findByDigestWithUser(digest: string): Promise<TokenWithUser | undefined> {
    const row = await TOKEN_BY_DIGEST.first(this.db, digest);
    if (!row) return undefined;
    const { u_username, u_is_admin, u_state, u_bot, ...token } = row;
    return { token, user: { id: token.user_id, username: u_username, is_admin: u_is_admin, state: u_state, bot: u_bot } };
  }

  async ownerIsAdmin(userId: number): Promise<boolean> {
    const row = await this.db.selectFrom('users').select('is_admin').where('id', '=', userId).executeTakeFirst();
    return row?.is_admin === 1;
  }

  /** A user's username, for the audit trail's names. */
  async username(userId: number): Promise<string | null> {
    const row = await this.db.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst();
    return row?.username ?? null;
  }

  findById(id: number): Promise<TokenRow | undefined> {
    return this.db.selectFrom('personal_access_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * One page of tokens and the count of all that match, with `state` judged in the query so
   * the total and the pages agree. Inactive is revoked or expired, as the `active` field says.
   */
  async list(filter: TokenListFilter, limit: number, offset: number): Promise<{ rows: TokenRow[]; total: number }> {
    let query = this.db.selectFrom('personal_access_tokens');
    if (filter.kinds) query = query.where('kind', 'in', filter.kinds);
    if (filter.userId !== undefined && filter.userId !== null) query = query.where('user_id', '=', filter.userId);
    if (filter.resource) {
      query = query.where('resource_kind', '=', filter.resource.kind).where('resource_id', '=', filter.resource.id);
    }
    if (filter.expiringBefore !== undefined) query = query.where('expires_at', '<', filter.expiringBefore);
    if (filter.state === 'active') {
      query = query.where('revoked', '=', 0).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.now)]));
    } else if (filter.state === 'inactive') {
      // A null expiry compares as unknown, so only revocation makes a never-expiring token inactive.
      query = query.where((eb) => eb.or([eb('revoked', '=', 1), eb('expires_at', '<=', filter.now)]));
    }
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('id', 'asc').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  /** The change bumps the credentials cache epoch (identity.epochs.ts): cached lookups end in every process. */
  async revoke(id: number): Promise<void> {
    await this.db.updateTable('personal_access_tokens').set({ revoked: 1 }).where('id', '=', id).execute();
  }

  /**
   * Revokes every live token of the rotation chain `id` belongs to: its predecessors and every
   * token rotated from any of them. Bumps the credentials epoch when one was live.
   */
  async revokeFamily(id: number): Promise<number> {
    const result = await sql`
      with recursive ancestors(id, previous_token_id) as (
        select id, previous_token_id from personal_access_tokens where id = ${id}
        union
        select t.id, t.previous_token_id from personal_access_tokens t join ancestors a on t.id = a.previous_token_id
      ),
      family(id) as (
        select id from ancestors
        union
        select t.id from personal_access_tokens t join family f on t.previous_token_id = f.id
      )
      update personal_access_tokens set revoked = 1 where revoked = 0 and id in (select id from family)`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  async touch(ids: readonly number[], at: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('personal_access_tokens').set({ last_used_at: at }).where('id', 'in', ids).execute();
  }
}
