import { sql } from 'kysely';
import { CompiledOnce, isUniqueViolation, type Executor } from '../../infra/db/index.js';
import type {
  AccessTokenRow,
  ApplicationRow,
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

// The token lookups of every OAuth-authenticated request and of the refresh grant,
// compiled once (docs/performance.md).
const TOKEN_BY_ACCESS_DIGEST = new CompiledOnce(1, (db, digest: string) =>
  db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('oauth_applications as a', 'a.id', 't.application_id')
    .selectAll('t')
    .select(['u.username as u_username', 'u.is_admin as u_is_admin', 'u.state as u_state', 'u.bot as u_bot', 'a.uid as a_uid'])
    .where('t.token_digest', '=', digest),
);
const TOKEN_BY_REFRESH_DIGEST = new CompiledOnce(1, (db, digest: string) =>
  db
    .selectFrom('oauth_access_tokens as t')
    .innerJoin('oauth_applications as a', 'a.id', 't.application_id')
    .selectAll('t')
    .select([
      'a.uid as a_uid',
      'a.name as a_name',
      'a.redirect_uri as a_redirect_uri',
      'a.scopes as a_scopes',
      'a.confidential as a_confidential',
      'a.secret_digest as a_secret_digest',
      'a.owner_id as a_owner_id',
      'a.created_at as a_created_at',
      'a.updated_at as a_updated_at',
    ])
    .where('t.refresh_digest', '=', digest),
);

/** Kysely implementation of OAuthStorage; plain rows in and out. */
export class OAuthRepository implements OAuthStorage {
  constructor(private readonly db: Executor) {}

  async transaction<T>(work: (storage: OAuthStorage) => Promise<T>): Promise<T> {
    if (this.db.isTransaction) return work(this);
    return this.db.transaction().execute((trx) => work(new OAuthRepository(trx)));
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

  async deleteApplication(id: number): Promise<boolean> {
    return changed(await this.db.deleteFrom('oauth_applications').where('id', '=', id).executeTakeFirstOrThrow()) === 1;
  }

  setApplicationSecret(id: number, digest: string, now: number): Promise<ApplicationRow | undefined> {
    return this.db
      .updateTable('oauth_applications')
      .set({ secret_digest: digest, updated_at: now })
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

  insertToken(token: NewAccessToken): Promise<AccessTokenRow> {
    return this.db.insertInto('oauth_access_tokens').values(token).returningAll().executeTakeFirstOrThrow();
  }

  async findTokenByAccessDigest(digest: string): Promise<TokenWithContext | undefined> {
    const row = await TOKEN_BY_ACCESS_DIGEST.first(this.db, digest);
    if (!row) return undefined;
    const { u_username, u_is_admin, u_state, u_bot, a_uid, ...token } = row;
    return {
      token,
      user: { id: token.user_id, username: u_username, is_admin: u_is_admin, state: u_state, bot: u_bot },
      applicationUid: a_uid,
    };
  }

  async findTokenByRefreshDigest(digest: string): Promise<TokenWithApplication | undefined> {
    const row = await TOKEN_BY_REFRESH_DIGEST.first(this.db, digest);
    if (!row) return undefined;
    const { a_uid, a_name, a_redirect_uri, a_scopes, a_confidential, a_secret_digest, a_owner_id, a_created_at, a_updated_at, ...token } =
      row;
    return {
      token,
      application: {
        id: token.application_id,
        uid: a_uid,
        name: a_name,
        redirect_uri: a_redirect_uri,
        scopes: a_scopes,
        confidential: a_confidential,
        secret_digest: a_secret_digest,
        owner_id: a_owner_id,
        created_at: a_created_at,
        updated_at: a_updated_at,
      },
    };
  }

  async rotateToken(id: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_access_tokens')
      .set({ revoked: 1, rotated: 1, revoked_at: now })
      .where('id', '=', id)
      .where('revoked', '=', 0)
      .executeTakeFirstOrThrow();
    return changed(result) === 1;
  }

  async revokeToken(id: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_access_tokens')
      .set({ revoked: 1, revoked_at: now })
      .where('id', '=', id)
      .where('revoked', '=', 0)
      .executeTakeFirstOrThrow();
    return changed(result) === 1;
  }

  async revokeFamily(family: string, now: number): Promise<number> {
    const result = await this.db
      .updateTable('oauth_access_tokens')
      .set({ revoked: 1, revoked_at: now })
      .where('family', '=', family)
      .where('revoked', '=', 0)
      .executeTakeFirstOrThrow();
    return changed(result);
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
