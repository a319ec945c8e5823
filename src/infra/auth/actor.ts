/** Who a request acts as, resolved once per request by the auth hook. */
export interface ActorUser {
  readonly id: number;
  readonly username: string;
  readonly isAdmin: boolean;
  readonly state: string;
  readonly bot: boolean;
}

export type CredentialKind =
  'personal_token' | 'impersonation_token' | 'project_token' | 'group_token' | 'oauth_token' | 'job_token' | 'session';

export interface Credential {
  readonly kind: CredentialKind;
  /** Row id of the token, session or job. */
  readonly id: number;
  /** Scopes the credential carries; `null` for a session or job token, which are not scoped. */
  readonly scopes: readonly string[] | null;
  /** For job tokens: the project the job runs in. */
  readonly projectId?: number;
  /** For OAuth tokens: the application's client id. */
  readonly applicationUid?: string;
}

export interface Actor {
  readonly user: ActorUser;
  readonly credential: Credential;
  /** Set when an administrator acts as `user` through Sudo. */
  readonly sudoer?: ActorUser;
  /** The client address of the request that acts (`request.ip`), which audit events record. */
  readonly ip?: string;
}

/** The REST scopes and the OAuth-only OpenID Connect ones. */
export const API_SCOPES = ['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode'] as const;
export const OIDC_SCOPES = ['openid', 'profile', 'email'] as const;
export const ALL_SCOPES = [...API_SCOPES, ...OIDC_SCOPES] as const;
export type Scope = (typeof ALL_SCOPES)[number];

export const isTokenCredential = (c: Credential): boolean => c.kind !== 'session' && c.kind !== 'job_token';
