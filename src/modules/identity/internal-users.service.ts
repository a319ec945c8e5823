import { isUniqueViolation, type Database, type Executor } from '../../infra/db/index.js';
import { ConflictError } from '../../infra/errors/index.js';
import { RESERVED_TOP_LEVEL_NAMES } from '../../infra/reserved-names.js';
import type { UserRow, UsersRepository } from './users.repository.js';
import type { UsersService } from './users.service.js';

/** An internal user a system feature acts as (the Alert Bot). */
export interface InternalUserSpec {
  /** The role's stable key; `instance_settings` keeps its user under `internal_user.<key>`. */
  readonly key: string;
  /** Its username: a reserved name (infra/reserved-names.ts INTERNAL_USERNAMES). */
  readonly username: string;
  readonly name: string;
}

/** Names tried after the reserved one is found taken (an instance from before it was reserved). */
const ATTEMPTS = 20;
const emailOf = (username: string) => `${username}@noreply.basalt.invalid`;

/**
 * Internal users exist before anyone can act: modules register them when the app is built and
 * `ensureAll` creates the missing ones at start-up, before the server listens. Each is found by
 * its role, recorded in `instance_settings`, never by its name, so a person who holds the name
 * (taken before it was reserved) is never mistaken for it; the user is then created under the
 * next free name (`alert-bot1`, ...). Creation and record commit together, and a process that
 * loses the race to another reads the other's record: safe with several processes at once.
 */
export class InternalUsers {
  private readonly specs = new Map<string, InternalUserSpec>();
  private readonly rows = new Map<string, UserRow>();

  constructor(
    private readonly db: Database,
    private readonly userRows: UsersRepository,
    private readonly users: UsersService,
  ) {}

  register(spec: InternalUserSpec): void {
    if (!RESERVED_TOP_LEVEL_NAMES.has(spec.username)) throw new Error(`internal user name ${spec.username} is not reserved`);
    this.specs.set(spec.key, spec);
  }

  async ensureAll(): Promise<void> {
    for (const key of this.specs.keys()) await this.get(key);
  }

  /** The internal user of a registered role, created when missing. */
  async get(key: string): Promise<UserRow> {
    const cached = this.rows.get(key);
    if (cached) return cached;
    const spec = this.specs.get(key);
    if (!spec) throw new Error(`internal user ${key} is not registered`);
    const row = await this.ensure(spec);
    this.rows.set(key, row);
    return row;
  }

  private async ensure(spec: InternalUserSpec): Promise<UserRow> {
    const settingKey = `internal_user.${spec.key}`;
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const recorded = await this.recorded(settingKey);
      if (recorded) return recorded;
      const username = attempt === 0 ? spec.username : `${spec.username}${attempt}`;
      try {
        await this.db.transaction().execute(async (trx) => {
          // The record is written first: it takes the write lock before anything is read (SQLite
          // cannot upgrade a read to a write under another writer), and a second process waits
          // on its key, then fails on it and reads the first one's user.
          await trx.insertInto('instance_settings').values({ key: settingKey, value: '' }).execute();
          const user =
            (attempt === 0 ? await this.createdBefore(spec, trx) : undefined) ??
            (await this.users.create({ username, name: spec.name, email: emailOf(username), bot: true }, trx, { internal: true }));
          await trx
            .updateTable('instance_settings')
            .set({ value: String(user.id) })
            .where('key', '=', settingKey)
            .execute();
        });
      } catch (error) {
        // The name or address is taken, or another process recorded the user first: look again.
        if (!(error instanceof ConflictError) && !isUniqueViolation(error)) throw error;
      }
    }
    throw new Error(`could not create the internal user ${spec.username}`);
  }

  private async recorded(settingKey: string): Promise<UserRow | undefined> {
    const setting = await this.db.selectFrom('instance_settings').select('value').where('key', '=', settingKey).executeTakeFirst();
    return setting ? this.userRows.findById(Number(setting.value)) : undefined;
  }

  /** The user an earlier version created on first use (a bot with the role's own address), adopted once. */
  private async createdBefore(spec: InternalUserSpec, trx: Executor): Promise<UserRow | undefined> {
    const user = await this.userRows.on(trx).findByUsername(spec.username);
    return user?.bot === 1 && user.email_lower === emailOf(spec.username) ? user : undefined;
  }
}
