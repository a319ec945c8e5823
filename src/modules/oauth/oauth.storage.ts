import type { Selectable } from 'kysely';
import type { Executor } from '../../infra/db/index.js';
import type {
  DeviceGrantStatus,
  OAuthAccessGrantsTable,
  OAuthAccessTokensTable,
  OAuthApplicationsTable,
  OAuthDeviceGrantsTable,
  OAuthSigningKeysTable,
} from '../../infra/db/tables/oauth.js';

export type ApplicationRow = Selectable<OAuthApplicationsTable>;
export type GrantRow = Selectable<OAuthAccessGrantsTable>;
export type AccessTokenRow = Selectable<OAuthAccessTokensTable>;
export type DeviceGrantRow = Selectable<OAuthDeviceGrantsTable>;
export type SigningKeyRow = Selectable<OAuthSigningKeysTable>;
export type { DeviceGrantStatus };

export interface TokenOwner {
  id: number;
  username: string;
  is_admin: number;
  state: string;
  bot: number;
}

/** An access token with what the hot paths need beside it, read in one indexed query. */
export interface TokenWithContext {
  token: AccessTokenRow;
  user: TokenOwner;
  applicationUid: string;
}

/** What client authentication, and a token issued to the client, need of its application. */
export type ClientApplication = Pick<ApplicationRow, 'id' | 'uid' | 'confidential' | 'secret_digest'>;

/** A token row as the refresh grant, revocation and introspection read it (the columns they use). */
export type RefreshableToken = Pick<
  AccessTokenRow,
  | 'id'
  | 'application_id'
  | 'user_id'
  | 'refresh_digest'
  | 'scopes'
  | 'family'
  | 'redirect_uri'
  | 'expires_at'
  | 'revoked'
  | 'rotated'
  | 'created_at'
>;

/** An application a user authorized whose consent is still live, for the Authorized applications list. */
export interface Authorization {
  application: Pick<ApplicationRow, 'id' | 'uid' | 'name'>;
  /** Every scope its live tokens carry. */
  scopes: string[];
  /** When the oldest live token was issued. */
  authorizedAt: number;
}

/** What the owner of an application may change on its Edit form. */
export type ApplicationChanges = Pick<ApplicationRow, 'name' | 'redirect_uri' | 'scopes' | 'confidential'>;

export interface TokenWithApplication {
  token: RefreshableToken;
  application: ClientApplication;
}

export type NewApplication = Omit<ApplicationRow, 'id'>;
export type NewGrant = Omit<GrantRow, 'id' | 'consumed_at'>;
export type NewAccessToken = Omit<AccessTokenRow, 'id' | 'revoked' | 'rotated' | 'revoked_at'>;
export type NewDeviceGrant = Omit<DeviceGrantRow, 'id' | 'status' | 'user_id' | 'last_polled_at'>;
export type NewSigningKey = Omit<SigningKeyRow, 'id'>;

/**
 * The one narrow storage interface the provider's steps work through (CONVENTIONS.md rule 5).
 * Secrets arrive here only as digests; tokens are found by the row id they carry. Every state
 * change that two requests could race on is a conditional UPDATE whose affected-row count
 * says who won, on SQLite and PostgreSQL.
 */
export interface OAuthStorage {
  /** `work` in one transaction; `executor` is that transaction, for bus events published with the change. */
  transaction<T>(work: (storage: OAuthStorage, executor: Executor) => Promise<T>): Promise<T>;

  insertApplication(app: NewApplication): Promise<ApplicationRow>;
  findApplicationByUid(uid: string): Promise<ApplicationRow | undefined>;
  findApplicationById(id: number): Promise<ApplicationRow | undefined>;
  listApplications(ownerId: number | null): Promise<ApplicationRow[]>;
  /** One page of every application, oldest first, and how many there are. */
  pageApplications(limit: number, offset: number): Promise<{ rows: ApplicationRow[]; total: number }>;
  deleteApplication(id: number): Promise<boolean>;
  setApplicationSecret(id: number, digest: string, now: number): Promise<ApplicationRow | undefined>;
  updateApplication(id: number, changes: ApplicationChanges, now: number): Promise<ApplicationRow | undefined>;

  insertGrant(grant: NewGrant): Promise<GrantRow>;
  findGrantByDigest(digest: string): Promise<GrantRow | undefined>;
  /** True for the one caller that marks the code used. */
  consumeGrant(id: number, now: number): Promise<boolean>;

  insertToken(token: NewAccessToken): Promise<AccessTokenRow>;
  /** The token row of this id (a token carries it, token-format.ts) with its owner; the caller checks the secret. */
  findTokenWithOwner(id: number): Promise<TokenWithContext | undefined>;
  /** The token row of this id with its application; the caller checks the secret. */
  findTokenWithApplication(id: number): Promise<TokenWithApplication | undefined>;
  /** Revokes a row because its refresh token was exchanged; true for the one winner. */
  rotateToken(id: number, now: number): Promise<boolean>;
  revokeToken(id: number, now: number): Promise<boolean>;
  revokeFamily(family: string, now: number): Promise<number>;
  /**
   * Everything a user's past consent still lets an application obtain ends: live tokens are
   * revoked, unexchanged codes used up, approved but unredeemed device grants denied.
   */
  endUserAccess(userId: number, now: number): Promise<void>;
  /** The same as endUserAccess for one application only: the user revoked it under Authorized applications. */
  endApplicationAccess(userId: number, applicationId: number, now: number): Promise<void>;
  /**
   * The scopes of each of the user's live tokens of the application: not revoked, and either
   * refreshable (refresh tokens do not expire) or not yet expired.
   */
  liveTokenScopes(userId: number, applicationId: number, now: number): Promise<string[]>;
  /** The applications the user's live tokens belong to, by name. */
  listAuthorizations(userId: number, now: number): Promise<Authorization[]>;
  /** Deletes up to `batch` codes and `batch` device grants that expired before `before`. */
  pruneGrants(before: number, batch: number): Promise<{ codes: number; deviceGrants: number }>;
  /** This storage on another executor: a publisher's open transaction (infra/bus.ts). */
  on(executor: Executor): OAuthStorage;

  insertDeviceGrant(grant: NewDeviceGrant): Promise<DeviceGrantRow>;
  findDeviceGrantByDeviceDigest(digest: string): Promise<DeviceGrantRow | undefined>;
  findDeviceGrantByUserDigest(digest: string): Promise<DeviceGrantRow | undefined>;
  /** Records a poll if at least the stored interval has passed since the last one. */
  recordPoll(id: number, now: number): Promise<boolean>;
  /** RFC 8628 §3.5: the poll was too soon; the interval grows and this poll counts as the last. */
  slowDown(id: number, now: number, incrementSeconds: number): Promise<void>;
  decideDeviceGrant(id: number, userId: number, status: 'approved' | 'denied', now: number): Promise<boolean>;
  consumeDeviceGrant(id: number): Promise<boolean>;

  findSigningKey(purpose: string): Promise<SigningKeyRow | undefined>;
  /** Inserts unless another process already did; returns the stored key either way. */
  insertSigningKey(key: NewSigningKey): Promise<SigningKeyRow>;
}
