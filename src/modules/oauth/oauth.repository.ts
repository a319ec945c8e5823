import { sql } from 'kysely';
import { CompiledOnce, type Executor, Repository, type Transact, isUniqueViolation } from '../../infra/db/index.js';
import type {
  AccessTokenRow,
  ApplicationChanges,
  ApplicationRow,
  Authorization,
  DeviceGrantRow,
  GrantRow,
  NewAccessToken,
  NewApplication,
  NewDeviceGrant,
  NewGrant,
  NewSigningKey,
  OAuthStorage,
  SigningKeyRow,
  TokenWithApplication,
  TokenWithContext,
} from './oauth.storage.js';

const changed = (result: { numUpdatedRows: bigint } | { numDeletedRows: bigint }): number =>
  Number('numUpdatedRows' in result ? result.numUpdatedRows : result.numDeletedRows);

// The token lookups of every OAuth-authenticated request and of the refresh grant, by the
// id a token carries (token-format.ts), compiled once (docs/perf-lab.md).
const TOKEN_WITH_OWNER = new CompiledOnce(1, (db, id: number) =>
  db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('oauth_applications as a', 'a.id', 't.application_id')
    .selectAll('t')
    .select(['u.username as u_username', 'u.is_admin as u_is_admin', 'u.state as u_state', 'u.bot as u_bot', 'a.uid as a_uid'])
    .where('t.id', '=', id),
);
// Only the columns the refresh grant, revocation and introspection use: reading a column
// value costs about as much as finding the row (docs/perf-lab.md).
const TOKEN_WITH_APPLICATION = new CompiledOnce(1, (db, id: number) =>
  db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('oauth_applications as a', 'a.id', 't.application_id')
    .select([
      't.id',
      't.application_id',
      't.user_id',
      't.refresh_digest',
      't.scopes',
      't.family',
      't.redirect_uri',
      't.expires_at',
      't.revoked',
      't.rotated',
      't.created_at',
      'a.uid',
      'a.confidential',
      'a.secret_digest',
    ])
    .where('t.id', '=', id),
);

/** The columns of a new token, in the order INSERT_TOKEN takes them. */
const NEW_TOKEN_COLUMNS = [
  'application_id',
  'user_id',
  'token_digest',
  'refresh_digest',
  'scopes',
  'family',
  'previous_id',
  'redirect_uri',
  'expires_at',
  'created_at',
] as const satisfies readonly (keyof NewAccessToken)[];
// Every grant and refresh runs these: compiled once (docs/perf-lab.md).
const INSERT_TOKEN = new CompiledOnce(NEW_TOKEN_COLUMNS.length, (db, ...values: unknown[]) =>
  db
    .insertInto('oauth_access_tokens')
    .values(Object.fromEntries(NEW_TOKEN_COLUMNS.map((column, i) => [column, values[i]])) as NewAccessToken)
    // Only the id: the rest of the row is what was just written (reading it back costs more).
    .returning('id'),
);
/** The conditional UPDATE only one of two racing refreshes wins: the returned row says who. */
const ROTATE_TOKEN = new CompiledOnce(2, (db, now: number, id: number) =>
  db
    .updateTable('oauth_access_tokens')
    .set({ revoked: 1, rotated: 1, revoked_at: now })
    .where('id', '=', id)
    .where('revoked', '=', 0)
    .returning('id'),
);

/** Kysely implementation of OAuthStorage; plain rows in and out. */
export class OAuthRepository extends Repository implements OAuthStorage {
  constructor(
    db: Executor,
    /** Write transactions share commits on SQLite (infra/db/write-batcher.ts). */
    private readonly transact: Transact,
  ) {
    super(db);
  }

  async transaction<T>(work: (storage: OAuthStorage, executor: Executor) => Promise<T>): Promise<T> {
    return this.atomically((repo) => work(repo, repo.db));
  }

  /**
   * `work` in the caller's transaction, or in one of its own: a token's revocation and the
   * bump of the credentials cache epoch (infra/db/epochs.ts) commit together.
   */
  private async atomically<T>(work: (repo: OAuthRepository) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return work(this);
    return this.transact((trx) => work(this.on(trx)));
  }

  insertApplication(app: NewApplication): Promise<ApplicationRow> {
    return this.db.insertInto('oauth_applications').values(app).returningAll().executeTakeFirstOrThrow();
  }

  findApplicationByUid(uid: string): Promise<ApplicationRow | undefined> {
    return this.db.selectFrom('oauth_applications').selectAll().where('uid', '=', uid).executeTakeFirst();
  }

  findApplicationById(id: number): Promise<ApplicationRow | undefined> {
    return this.db.selectFrom('oauth_applications').selectAll().where('id', '=', id).executeTakeFirst();
  }

  listApplications(ownerId: number | null): Promise<ApplicationRow[]> {
    let query = this.db.selectFrom('oauth_applications').selectAll().orderBy('id');
    if (ownerId !== null) query = query.where('owner_id', '=', ownerId);
    return query.execute();
  }

  async pageApplications(limit: number, offset: number): Promise<{ rows: ApplicationRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.db.selectFrom('oauth_applications').selectAll().orderBy('id').limit(limit).offset(offset).execute(),
      this.db
        .selectFrom('oauth_applications')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.n) };
  }

  async deleteApplication(id: number): Promise<boolean> {
    return this.atomically(async (repo) => {
      // Its tokens go with it (ON DELETE CASCADE); the delete bumps the credentials epoch (oauth.epochs.ts).
      return changed(await repo.db.deleteFrom('oauth_applications').where('id', '=', id).executeTakeFirstOrThrow()) === 1;
    });
  }

  setApplicationSecret(id: number, digest: string, now: number): Promise<ApplicationRow | undefined> {
    return this.db
      .updateTable('oauth_applications')
      .set({ secret_digest: digest, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  updateApplication(id: number, changes: ApplicationChanges, now: number): Promise<ApplicationRow | undefined> {
    return this.db
      .updateTable('oauth_applications')
      .set({ ...changes, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  insertGrant(grant: NewGrant): Promise<GrantRow> {
    return this.db.insertInto('oauth_access_grants').values(grant).returningAll().executeTakeFirstOrThrow();
  }

  findGrantByDigest(digest: string): Promise<GrantRow | undefined> {
    return this.db.selectFrom('oauth_access_grants').selectAll().where('code_digest', '=', digest).executeTakeFirst();
  }

  async consumeGrant(id: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_access_grants')
      .set({ consumed_at: now })
      .where('id', '=', id)
      .where('consumed_at', 'is', null)
      .executeTakeFirstOrThrow();
    return changed(result) === 1;
  }

  async insertToken(token: NewAccessToken): Promise<AccessTokenRow> {
    const row = await INSERT_TOKEN.first(this.db, ...NEW_TOKEN_COLUMNS.map((column) => token[column]));
    if (!row) throw new Error('the token insert returned no row');
    // A new token is live: the columns left to their defaults are these.
    return { id: row.id, ...token, revoked: 0, rotated: 0, revoked_at: null };
  }

  async findTokenWithOwner(id: number): Promise<TokenWithContext | undefined> {
    const row = await TOKEN_WITH_OWNER.first(this.db, id);
    if (!row) return undefined;
    const { u_username, u_is_admin, u_state, u_bot, a_uid, ...token } = row;
    return {
      token,
      user: { id: token.user_id, username: u_username, is_admin: u_is_admin, state: u_state, bot: u_bot },
      applicationUid: a_uid,
    };
  }

  async findTokenWithApplication(id: number): Promise<TokenWithApplication | undefined> {
    const row = await TOKEN_WITH_APPLICATION.first(this.db, id);
    if (!row) return undefined;
    return {
      token: {
        id: row.id,
        application_id: row.application_id,
        user_id: row.user_id,
        refresh_digest: row.refresh_digest,
        scopes: row.scopes,
        family: row.family,
        redirect_uri: row.redirect_uri,
        expires_at: row.expires_at,
        revoked: row.revoked,
        rotated: row.rotated,
        created_at: row.created_at,
      },
      application: { id: row.application_id, uid: row.uid, confidential: row.confidential, secret_digest: row.secret_digest },
    };
  }

  async rotateToken(id: number, now: number): Promise<boolean> {
    return this.atomically(async (repo) => {
      return (await ROTATE_TOKEN.rows(repo.db, now, id)).length > 0;
    });
  }

  async revokeToken(id: number, now: number): Promise<boolean> {
    return (await this.revokeLive({ id }, now)) === 1;
  }

  revokeFamily(family: string, now: number): Promise<number> {
    return this.revokeLive({ family }, now);
  }

  async pruneGrants(before: number, batch: number): Promise<{ codes: number; deviceGrants: number }> {
    const codes = await this.db
      .deleteFrom('oauth_access_grants')
      .where('id', 'in', (eb) =>
        eb.selectFrom('oauth_access_grants').select('id').where('expires_at', '<', before).orderBy('id').limit(batch),
      )
      .executeTakeFirst();
    const deviceGrants = await this.db
      .deleteFrom('oauth_device_grants')
      .where('id', 'in', (eb) =>
        eb.selectFrom('oauth_device_grants').select('id').where('expires_at', '<', before).orderBy('id').limit(batch),
      )
      .executeTakeFirst();
    return { codes: Number(codes.numDeletedRows), deviceGrants: Number(deviceGrants.numDeletedRows) };
  }

  /** A storage on another executor (a publisher's open transaction, infra/bus.ts). */
  override on(executor: Executor): this {
    return new OAuthRepository(executor, this.transact) as this;
  }

  async endUserAccess(userId: number, now: number): Promise<void> {
    await this.endAccess(userId, undefined, now);
  }

  endApplicationAccess(userId: number, applicationId: number, now: number): Promise<void> {
    return this.atomically((repo) => repo.endAccess(userId, applicationId, now));
  }

  private async endAccess(userId: number, applicationId: number | undefined, now: number): Promise<void> {
    await this.revokeLive(applicationId === undefined ? { userId } : { userId, applicationId }, now);
    // Codes not yet exchanged count as used; device grants approved but not yet redeemed as denied.
    let codes = this.db
      .updateTable('oauth_access_grants')
      .set({ consumed_at: now })
      .where('user_id', '=', userId)
      .where('consumed_at', 'is', null);
    if (applicationId !== undefined) codes = codes.where('application_id', '=', applicationId);
    await codes.execute();
    let devices = this.db
      .updateTable('oauth_device_grants')
      .set({ status: 'denied' })
      .where('user_id', '=', userId)
      .where('status', '=', 'approved');
    if (applicationId !== undefined) devices = devices.where('application_id', '=', applicationId);
    await devices.execute();
  }

  async liveTokenScopes(userId: number, applicationId: number, now: number): Promise<string[]> {
    const rows = await this.liveTokens(userId, now).where('t.application_id', '=', applicationId).select('t.scopes').execute();
    return rows.map((row) => row.scopes);
  }

  async listAuthorizations(userId: number, now: number): Promise<Authorization[]> {
    const rows = await this.liveTokens(userId, now)
      .innerJoin('oauth_applications as a', 'a.id', 't.application_id')
      .select(['a.id', 'a.uid', 'a.name', 't.scopes', 't.created_at'])
      .orderBy('t.id')
      .execute();
    const byApplication = new Map<number, Authorization>();
    for (const row of rows) {
      const found = byApplication.get(row.id) ?? {
        application: { id: row.id, uid: row.uid, name: row.name },
        scopes: [],
        authorizedAt: row.created_at,
      };
      for (const scope of row.scopes.split(' ')) if (scope && !found.scopes.includes(scope)) found.scopes.push(scope);
      found.authorizedAt = Math.min(found.authorizedAt, row.created_at);
      byApplication.set(row.id, found);
    }
    return [...byApplication.values()].sort((a, b) => a.application.name.localeCompare(b.application.name));
  }

  /** A user's tokens that still let an application act: not revoked, and refreshable or unexpired. */
  private liveTokens(userId: number, now: number) {
    return this.db
      .selectFrom('oauth_access_tokens as t')
      .where('t.user_id', '=', userId)
      .where('t.revoked', '=', 0)
      .where((eb) => eb.or([eb('t.refresh_digest', 'is not', null), eb('t.expires_at', 'is', null), eb('t.expires_at', '>', now)]));
  }

  /** Revokes the live tokens named, with the credentials epoch bumped in the same transaction when any was. */
  private revokeLive(
    which: { id: number } | { family: string } | { userId: number; applicationId?: number },
    now: number,
  ): Promise<number> {
    return this.atomically(async (repo) => {
      // `revoked = 0` stated literally: only then does SQLite use the live-family partial index.
      const update = repo.db
        .updateTable('oauth_access_tokens')
        .set({ revoked: 1, revoked_at: now })
        .where(sql<boolean>`revoked = 0`);
      const result = await (
        'id' in which
          ? update.where('id', '=', which.id)
          : 'family' in which
            ? update.where('family', '=', which.family)
            : which.applicationId === undefined
              ? update.where('user_id', '=', which.userId)
              : update.where('user_id', '=', which.userId).where('application_id', '=', which.applicationId)
      ).executeTakeFirstOrThrow();
      return changed(result);
    });
  }

  insertDeviceGrant(grant: NewDeviceGrant): Promise<DeviceGrantRow> {
    return this.db.insertInto('oauth_device_grants').values(grant).returningAll().executeTakeFirstOrThrow();
  }

  findDeviceGrantByDeviceDigest(digest: string): Promise<DeviceGrantRow | undefined> {
    return this.db.selectFrom('oauth_device_grants').selectAll().where('device_code_digest', '=', digest).executeTakeFirst();
  }

  findDeviceGrantByUserDigest(digest: string): Promise<DeviceGrantRow | undefined> {
    return this.db.selectFrom('oauth_device_grants').selectAll().where('user_code_digest', '=', digest).executeTakeFirst();
  }

  async recordPoll(id: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_device_grants')
      .set({ last_polled_at: now })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_polled_at', 'is', null), eb(sql<number>`last_polled_at + interval_seconds * 1000`, '<=', now)]))
      .executeTakeFirstOrThrow();
    return changed(result) === 1;
  }

  async slowDown(id: number, now: number, incrementSeconds: number): Promise<void> {
    await this.db
      .updateTable('oauth_device_grants')
      .set((eb) => ({ interval_seconds: eb('interval_seconds', '+', incrementSeconds), last_polled_at: now }))
      .where('id', '=', id)
      .execute();
  }

  async decideDeviceGrant(id: number, userId: number, status: 'approved' | 'denied', now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_device_grants')
      .set({ status, user_id: userId })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return changed(result) === 1;
  }

  async consumeDeviceGrant(id: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_device_grants')
      .set({ status: 'consumed' })
      .where('id', '=', id)
      .where('status', '=', 'approved')
      .executeTakeFirstOrThrow();
    return changed(result) === 1;
  }

  findSigningKey(purpose: string): Promise<SigningKeyRow | undefined> {
    return this.db.selectFrom('oauth_signing_keys').selectAll().where('purpose', '=', purpose).executeTakeFirst();
  }

  async insertSigningKey(key: NewSigningKey): Promise<SigningKeyRow> {
    try {
      return await this.db.insertInto('oauth_signing_keys').values(key).returningAll().executeTakeFirstOrThrow();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await this.findSigningKey(key.purpose);
      if (!existing) throw error;
      return existing;
    }
  }
}
