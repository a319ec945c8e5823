import type { Generated } from 'kysely';
import type { Flag, Millis } from './core.js';

export interface OAuthApplicationsTable {
  id: Generated<number>;
  uid: string;
  name: string;
  /** Registered redirect URIs, one per line. */
  redirect_uri: string;
  /** Space-separated scopes the application may request. */
  scopes: string;
  confidential: Generated<Flag>;
  secret_digest: string;
  owner_id: number | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface OAuthAccessGrantsTable {
  id: Generated<number>;
  application_id: number;
  user_id: number;
  code_digest: string;
  interaction_id: string | null;
  redirect_uri: string;
  scopes: string;
  code_challenge: string | null;
  code_challenge_method: string | null;
  nonce: string | null;
  root_namespace_id: number | null;
  family: string;
  auth_time: Millis | null;
  expires_at: Millis;
  consumed_at: Millis | null;
  created_at: Millis;
}

export interface OAuthAccessTokensTable {
  id: Generated<number>;
  application_id: number;
  user_id: number;
  token_digest: string;
  refresh_digest: string | null;
  scopes: string;
  family: string;
  previous_id: number | null;
  redirect_uri: string | null;
  expires_at: Millis | null;
  revoked: Generated<Flag>;
  rotated: Generated<Flag>;
  revoked_at: Millis | null;
  created_at: Millis;
}

export type DeviceGrantStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface OAuthDeviceGrantsTable {
  id: Generated<number>;
  application_id: number;
  device_code_digest: string;
  user_code_digest: string;
  scopes: string;
  status: Generated<DeviceGrantStatus>;
  user_id: number | null;
  interval_seconds: number;
  last_polled_at: Millis | null;
  family: string;
  expires_at: Millis;
  created_at: Millis;
}

export interface OAuthSigningKeysTable {
  id: Generated<number>;
  purpose: string;
  kid: string;
  algorithm: string;
  public_jwk: string;
  private_jwk_sealed: string;
  created_at: Millis;
}

export interface OAuthTables {
  oauth_applications: OAuthApplicationsTable;
  oauth_access_grants: OAuthAccessGrantsTable;
  oauth_access_tokens: OAuthAccessTokensTable;
  oauth_device_grants: OAuthDeviceGrantsTable;
  oauth_signing_keys: OAuthSigningKeysTable;
}
