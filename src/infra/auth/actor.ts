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

/**
 * `actor` acting from the client address `ip`. Built field by field, not by a spread: V8 (Node 20)
 * gives an object made by a leading spread a map of its own, so every request's actor would have
 * a new shape and each later read of it would be slow (docs/performance.md "Audit").
 */
export function actingFrom(actor: Actor, ip: string): Actor {
  return actor.sudoer === undefined
    ? { user: actor.user, credential: actor.credential, ip }
    : { user: actor.user, credential: actor.credential, sudoer: actor.sudoer, ip };
}

/** The REST scopes and the OAuth-only OpenID Connect ones. */
export const API_SCOPES = ['api', 'read_api', 'read_user', 'read_repository', 'write_repository', 'sudo', 'admin_mode'] as const;
export const OIDC_SCOPES = ['openid', 'profile', 'email'] as const;
export const ALL_SCOPES = [...API_SCOPES, ...OIDC_SCOPES] as const;
export type Scope = (typeof ALL_SCOPES)[number];

export const isTokenCredential = (c: Credential): boolean => c.kind !== 'session' && c.kind !== 'job_token';
