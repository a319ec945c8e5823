import type { Selectable, Updateable } from 'kysely';
import { CompiledOnce, Repository, containing } from '../../infra/db/index.js';
import type { UsersTable } from '../../infra/db/tables/core.js';

export type UserRow = Selectable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;

export interface NewUser {
  username: string;
  name: string;
  email: string;
  passwordHash: string | null;
  isAdmin: boolean;
  bot: boolean;
  privateProfile: boolean;
  bio: string;
  confirmedAt: number | null;
  now: number;
}

export interface UserFilter {
  username?: string;
  search?: string;
  /** Whether `search` also matches private e-mail addresses: for administrators only. */
  searchEmails?: boolean;
  active?: boolean;
  blocked?: boolean;
  humans?: boolean;
}

const USER_BY_ID = new CompiledOnce<UserRow, [number]>(1, (db, id) => db.selectFrom('users').selectAll().where('id', '=', id));

export class UsersRepository extends Repository {
  async insert(user: NewUser): Promise<UserRow> {
    return this.db
      .insertInto('users')
      .values({
        username: user.username,
        username_lower: user.username.toLowerCase(),
        name: user.name,
        email: user.email,
        email_lower: user.email.toLowerCase(),
        password_hash: user.passwordHash,
        is_admin: user.isAdmin ? 1 : 0,
        bot: user.bot ? 1 : 0,
        private_profile: user.privateProfile ? 1 : 0,
        bio: user.bio,
        confirmed_at: user.confirmedAt,
        created_at: user.now,
        updated_at: user.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  findById(id: number): Promise<UserRow | undefined> {
    return USER_BY_ID.first(this.db, id);
  }

  findManyByIds(ids: readonly number[]): Promise<UserRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('id', 'in', [...new Set(ids)])
      .execute();
  }

  findByUsername(username: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('username_lower', '=', username.toLowerCase()).executeTakeFirst();
  }

  findByLogin(login: string): Promise<UserRow | undefined> {
    const lower = login.toLowerCase();
    return this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb.or([eb('username_lower', '=', lower), eb('email_lower', '=', lower)]))
      .executeTakeFirst();
  }

  async list(filter: UserFilter, limit: number, offset: number): Promise<{ rows: UserRow[]; total: number }> {
    let query = this.db.selectFrom('users');
    if (filter.username) query = query.where('username_lower', '=', filter.username.toLowerCase());
    if (filter.search) {
      const lower = filter.search.toLowerCase();
      const like = containing(lower);
      // Others match a public e-mail exactly (as the established product does), never a private one:
      // a pattern over private addresses lets anyone recover one a character at a time.
      query = query.where((eb) =>
        eb.or([
          eb('username_lower', 'like', like),
          eb(eb.fn('lower', ['name']), 'like', like),
          filter.searchEmails ? eb('email_lower', 'like', like) : eb(eb.fn('lower', ['public_email']), '=', lower),
        ]),
      );
    }
    if (filter.active) query = query.where('state', '=', 'active');
    if (filter.blocked) query = query.where('state', '=', 'blocked');
    if (filter.humans) query = query.where('bot', '=', 0);
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('id', 'asc').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  async update(id: number, changes: UserUpdate): Promise<UserRow | undefined> {
    return this.db.updateTable('users').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
