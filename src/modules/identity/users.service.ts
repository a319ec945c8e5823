import type { DomainEventBus } from '../../infra/bus.js';
import type { Clock } from '../../infra/clock.js';
import { hashPassword, randomPassword, verifyPassword } from '../../infra/crypto.js';
import { isUniqueViolation, type Database, type Executor } from '../../infra/db/index.js';
import { ConflictError, NotFoundError, ValidationError, type ValidationMessages } from '../../infra/errors/index.js';
import { idOf, isNumericRef } from '../../infra/refs.js';
import { pathProblem } from '../../infra/reserved-names.js';
import type { Actor, ActorUser } from '../../infra/auth/index.js';
import { SYSTEM_AUTHOR, auditAuthor, auditEntry, withSudo, type AuditEntry } from '../../infra/audit.js';
import type { SessionsService } from './sessions.service.js';
import type { UsersRepository, UserFilter, UserRow, UserUpdate } from './users.repository.js';

export interface CreateUserInput {
  username: string;
  name: string;
  email: string;
  password?: string | undefined;
  admin?: boolean | undefined;
  bot?: boolean | undefined;
  bio?: string | undefined;
  private_profile?: boolean | null | undefined;
  skip_confirmation?: boolean | undefined;
}

export interface UpdateUserInput {
  name?: string | undefined;
  email?: string | undefined;
  bio?: string | undefined;
  private_profile?: boolean | null | undefined;
  public_email?: string | null | undefined;
  admin?: boolean | undefined;
  password?: string | undefined;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const BIO_MAX = 255;

function checkProfile(
  input: { bio?: string | undefined; email?: string | undefined; name?: string | undefined; password?: string | undefined },
  messages: ValidationMessages,
): void {
  if (input.bio !== undefined && input.bio.length > BIO_MAX) messages.bio = [`is too long (maximum is ${BIO_MAX} characters)`];
  if (input.email !== undefined && (!EMAIL.test(input.email) || input.email.length > 255)) messages.email = ['is invalid'];
  if (input.name !== undefined && input.name.trim() === '') messages.name = ["can't be blank"];
  if (input.name !== undefined && input.name.length > 255) messages.name = ['is too long (maximum is 255 characters)'];
  if (input.password !== undefined && input.password.length < 8) messages.password = ['is too short (minimum is 8 characters)'];
}

export const toActorUser = (row: Pick<UserRow, 'id' | 'username' | 'is_admin' | 'state' | 'bot'>): ActorUser => ({
  id: row.id,
  username: row.username,
  isAdmin: row.is_admin === 1,
  state: row.state,
  bot: row.bot === 1,
});

const OWN_ROW_TTL_MS = 5_000;
const OWN_ROWS_MAX = 10_000;

export class UsersService {
  private readonly ownRows = new Map<number, { row: UserRow; until: number }>();

  constructor(
    private readonly db: Database,
    private readonly users: UsersRepository,
    private readonly clock: Clock,
    private readonly bus: DomainEventBus,
    private readonly sessions: SessionsService,
  ) {}

  /**
   * Creates an account; a caller with its own transaction (bot users of access tokens) passes it.
   * Only InternalUsers passes `internal`, to create an internal user under its reserved name
   * (an option apart from the input, which routes fill from request bodies).
   */
  async create(input: CreateUserInput, executor?: Executor, options: { internal?: boolean; by?: Actor | null } = {}): Promise<UserRow> {
    const messages: ValidationMessages = {};
    const usernameProblem = pathProblem(input.username, true, options.internal === true);
    if (usernameProblem) messages.username = [usernameProblem];
    checkProfile(input, messages);
    if (Object.keys(messages).length > 0) throw new ValidationError(messages);
    const repo = executor ? this.users.on(executor) : this.users;
    if (await repo.findByUsername(input.username)) throw new ConflictError('Username has already been taken');
    // Bots (project and group token users) never sign in with a password: they get none.
    const passwordHash = input.bot ? null : await hashPassword(input.password ?? randomPassword());
    const now = this.clock.now();
    const run = async (trx: Executor) => {
      const user = await this.users.on(trx).insert({
        username: input.username,
        name: input.name,
        email: input.email,
        passwordHash,
        isAdmin: input.admin ?? false,
        bot: input.bot ?? false,
        // Version 4 accepts `private_profile: null` and reads it as false (SPEC "Versioning").
        privateProfile: input.private_profile ?? false,
        bio: input.bio ?? '',
        confirmedAt: input.skip_confirmation === false ? null : now,
        now,
      });
      await this.bus.publish({ type: 'user_created', userId: user.id, username: user.username, name: user.name, at: now }, trx);
      // Bots are audited through the token they serve; internal users are the server's own.
      if (!input.bot && !options.internal) {
        const details = withSudo({ admin: user.is_admin === 1 }, options.by);
        await this.audit(trx, options.by, user, 'user_created', now, details);
      }
      return user;
    };
    try {
      return await (executor ? run(executor) : this.db.transaction().execute(run));
    } catch (error) {
      if (isUniqueViolation(error)) {
        const taken = String((error as Error).message).includes('email')
          ? 'Email has already been taken'
          : 'Username has already been taken';
        throw new ConflictError(taken);
      }
      throw error;
    }
  }

  /**
   * A new password ends the user's other sessions in the same transaction, whichever way it was
   * changed: whoever held a session through the old password loses it. `actingSessionId` is the
   * session making the change, which survives when it is the user's own.
   */
  async update(id: number, input: UpdateUserInput, actingSessionId?: number, by?: Actor | null): Promise<UserRow> {
    const messages: ValidationMessages = {};
    checkProfile(input, messages);
    if (Object.keys(messages).length > 0) throw new ValidationError(messages);
    const changes: UserUpdate = { updated_at: this.clock.now() };
    if (input.name !== undefined) changes.name = input.name;
    if (input.email !== undefined) Object.assign(changes, { email: input.email, email_lower: input.email.toLowerCase() });
    if (input.bio !== undefined) changes.bio = input.bio;
    if (input.private_profile !== undefined) changes.private_profile = input.private_profile ? 1 : 0;
    if (input.public_email !== undefined) changes.public_email = input.public_email;
    if (input.admin !== undefined) changes.is_admin = input.admin ? 1 : 0;
    if (input.password !== undefined) changes.password_hash = await hashPassword(input.password);
    const now = changes.updated_at as number;
    // A new password ends other sessions; it and a change of the admin flag are audited.
    const also = async (trx: Executor, row: UserRow) => {
      if (input.password !== undefined) await this.sessions.endOtherSessions(trx, id, actingSessionId);
      if (input.admin !== undefined) {
        await this.audit(trx, by, row, input.admin ? 'user_admin_granted' : 'user_admin_revoked', now, withSudo({}, by));
      }
      if (input.password !== undefined) await this.audit(trx, by, row, 'user_password_changed', now, withSudo({}, by));
    };
    try {
      const row = await this.updateRow(id, changes, also);
      if (!row) throw new NotFoundError('User');
      return row;
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('Email has already been taken');
      throw error;
    }
  }

  /**
   * A block is announced in its transaction: other modules end what the user's consent still
   * grants. Blocking a blocked user announces it again, which finds nothing left to end.
   */
  async setState(id: number, state: 'active' | 'blocked', by?: Actor | null): Promise<UserRow> {
    const now = this.clock.now();
    const announce = async (trx: Executor, row: UserRow) => {
      if (state === 'blocked') await this.bus.publish({ type: 'user_blocked', userId: id, at: now }, trx);
      await this.audit(trx, by, row, state === 'blocked' ? 'user_blocked' : 'user_unblocked', now, withSudo({}, by));
    };
    const row = await this.updateRow(id, { state, updated_at: now }, announce);
    if (!row) throw new NotFoundError('User');
    return row;
  }

  /** By id; other modules pass their transaction when they read inside one (a bus subscriber). */
  findById(id: number, executor?: Executor): Promise<UserRow | undefined> {
    return (executor ? this.users.on(executor) : this.users).findById(id);
  }

  /**
   * Every change to a user's row goes through here. A change of state or admin flag bumps
   * the credentials cache epoch in the same transaction (identity.epochs.ts): cached token
   * lookups carry both and must not outlive a block or a demotion in any process. The
   * cached own row (`getOwn`) is dropped once the change is written.
   */
  private async updateRow(
    id: number,
    changes: UserUpdate,
    also?: (trx: Executor, row: UserRow) => Promise<void>,
  ): Promise<UserRow | undefined> {
    const row = await this.db.transaction().execute(async (trx) => {
      const updated = await this.users.on(trx).update(id, changes);
      if (updated && also) await also(trx, updated);
      return updated;
    });
    this.ownRows.delete(id);
    return row;
  }

  /** Users by id, for presenting authors of many rows with one query. */
  async mapByIds(ids: readonly (number | null)[]): Promise<Map<number, UserRow>> {
    const rows = await this.users.findManyByIds(ids.filter((id): id is number => id !== null));
    return new Map(rows.map((u) => [u.id, u]));
  }

  findByUsername(username: string): Promise<UserRow | undefined> {
    return this.users.findByUsername(username);
  }

  async get(id: number): Promise<UserRow> {
    const user = await this.users.findById(id);
    if (!user) throw new NotFoundError('User');
    return user;
  }

  /**
   * The caller's own row for `GET /user`, read through a cache of a few seconds: the same
   * window as the token cache that already carries the caller's state and admin flag.
   * Writes through this service drop the entry at once; a change made by another process
   * shows within the window (docs/decisions.md).
   */
  async getOwn(id: number): Promise<UserRow> {
    const now = this.clock.now();
    const cached = this.ownRows.get(id);
    if (cached && cached.until > now) return cached.row;
    const row = await this.get(id);
    if (this.ownRows.size >= OWN_ROWS_MAX) this.ownRows.clear();
    this.ownRows.set(id, { row, until: now + OWN_ROW_TTL_MS });
    return row;
  }

  /** Sudo and `/users/:id` take a numeric ID or a case-insensitive username. */
  findByIdOrUsername(value: string): Promise<UserRow | undefined> {
    if (!isNumericRef(value)) return this.users.findByUsername(value);
    const id = idOf(value);
    return id === null ? Promise.resolve(undefined) : this.users.findById(id);
  }

  list(filter: UserFilter, limit: number, offset: number) {
    return this.users.list(filter, limit, offset);
  }

  /** Username or email plus password; `null` when they do not match an active account. */
  async authenticate(login: string, password: string): Promise<UserRow | null> {
    const user = await this.users.findByLogin(login);
    const ok = await verifyPassword(password, user?.password_hash ?? null);
    return ok && user ? user : null;
  }

  /** Publishes a change to `user` for the audit trail (author `system` when no one acted: start-up, the command line). */
  private audit(
    trx: Executor,
    by: Actor | null | undefined,
    user: UserRow,
    eventName: string,
    at: number,
    details: AuditEntry['details'],
  ): Promise<void> {
    const entry = auditEntry(by ? auditAuthor(by) : SYSTEM_AUTHOR, {
      entityType: 'User',
      entityId: user.id,
      entityPath: user.username,
      targetType: 'User',
      targetId: user.id,
      targetDetails: user.username,
      eventName,
      details,
      at,
    });
    return this.bus.publish({ type: 'audited', at, entry }, trx);
  }

  /** Stamps a sign-in, and records it in the audit trail in the same transaction. */
  async recordSignIn(user: UserRow, ip: string | null = null): Promise<void> {
    const now = this.clock.now();
    await this.updateRow(user.id, { last_sign_in_at: user.current_sign_in_at, current_sign_in_at: now }, (trx) =>
      this.bus.publish({ type: 'audited', at: now, entry: signInEntry(user, user.username, 'user_signed_in', ip, now) }, trx),
    );
  }

  /**
   * A refused password (or a blocked or bot account) in the audit trail: the account when the
   * login names one, else the login as given (cut to 255 characters), with author id -1.
   */
  async recordFailedSignIn(login: string, user: UserRow | null, ip: string | null, via?: 'git_http'): Promise<void> {
    const now = this.clock.now();
    const account = user ?? (login === '' ? null : ((await this.users.findByLogin(login)) ?? null));
    const entry = signInEntry(account, login.slice(0, 255), 'user_sign_in_failed', ip, now, via);
    await this.db.transaction().execute((trx) => this.bus.publish({ type: 'audited', at: now, entry }, trx));
  }

  countUsers(): Promise<number> {
    return this.users.count();
  }
}

/** A sign-in's audit entry: about the account (id -1 when the login names none). */
function signInEntry(user: UserRow | null, name: string, eventName: string, ip: string | null, at: number, via?: 'git_http'): AuditEntry {
  return auditEntry(
    { authorId: user?.id ?? -1, authorName: user?.username ?? name, ipAddress: ip },
    {
      entityType: 'User',
      entityId: user?.id ?? -1,
      entityPath: user?.username ?? name,
      eventName,
      // `via` names the door other than the sign-in page (git over HTTP with a password).
      details: via ? { with: 'password', via } : { with: 'password' },
      at,
    },
  );
}
