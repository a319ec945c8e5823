/**
 * RFC 6749 §5.2 errors, one class per code. The `/oauth` handler renders them as
 * `{error, error_description}`; only `invalid_client` (and `unauthorized_client` at the
 * token endpoint) answer 401, the rest 400 (RFC 6749 §5.2).
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_token'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'invalid_redirect_uri'
  | 'invalid_code_challenge_method'
  | 'insufficient_scope';

export const OAUTH_DESCRIPTIONS: Record<OAuthErrorCode, string> = {
  invalid_request: 'The request is missing a required parameter, includes an unsupported parameter value, or is otherwise malformed.',
  invalid_client:
    'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  invalid_grant:
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  unauthorized_client: 'The client is not authorized to perform this request using this method.',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed.',
  access_denied: 'The resource owner or authorization server denied the request.',
  unsupported_response_type: 'The authorization server does not support this response type.',
  server_error: 'The authorization server encountered an unexpected condition which prevented it from fulfilling the request.',
  temporarily_unavailable: 'The authorization server is temporarily overloaded; retry later.',
  invalid_token: 'The access token is invalid',
  authorization_pending: "The authorization request is still pending as the end user hasn't yet completed the user-interaction steps.",
  slow_down: 'The client is polling too quickly; increase the interval between requests by 5 seconds.',
  expired_token: 'The device_code has expired, and the device authorization session has concluded.',
  invalid_redirect_uri: "The requested redirect URI is malformed or doesn't match the client redirect URI.",
  invalid_code_challenge_method: 'The code_challenge_method must be S256.',
  insufficient_scope: 'The request requires higher privileges than provided by the access token.',
};

export class OAuthError extends Error {
  readonly headers: Record<string, string> = {};
  constructor(
    readonly error: OAuthErrorCode,
    description?: string,
    readonly status: number = error === 'invalid_client' ? 401 : 400,
  ) {
    super(description ?? OAUTH_DESCRIPTIONS[error]);
    this.name = 'OAuthError';
  }

  get description(): string {
    return this.message;
  }

  body(): Record<string, string> {
    return { error: this.error, error_description: this.description };
  }

  static missing(parameter: string): OAuthError {
    return new OAuthError('invalid_request', `Missing required parameter: ${parameter}.`);
  }
}

// One class per error code (CONVENTIONS.md rule 5); the `/oauth` handler renders them all.
export class InvalidRequestError extends OAuthError {
  constructor(description?: string) {
    super('invalid_request', description);
  }
}

/** RFC 6749 §5.2: 401 and a `WWW-Authenticate` challenge for the scheme the client may use. */
export class InvalidClientError extends OAuthError {
  constructor(description?: string) {
    super('invalid_client', description, 401);
    this.headers['www-authenticate'] = 'Basic realm="Basalt"';
  }
}

export class InvalidGrantError extends OAuthError {
  constructor(description?: string) {
    super('invalid_grant', description);
  }
}

export class UnauthorizedClientError extends OAuthError {
  constructor(description?: string, status = 400) {
    super('unauthorized_client', description, status);
  }
}

/** RFC 6749 §4.1.2.1's code for an overloaded server, as a 503 with `Retry-After` (SPEC "Errors"). */
export class TemporarilyUnavailableError extends OAuthError {
  constructor(retryAfter: string | undefined) {
    super('temporarily_unavailable', undefined, 503);
    if (retryAfter !== undefined) this.headers['retry-after'] = retryAfter;
  }
}

export class UnsupportedGrantTypeError extends OAuthError {
  constructor(description?: string) {
    super('unsupported_grant_type', description);
  }
}

export class InvalidScopeError extends OAuthError {
  constructor(description?: string) {
    super('invalid_scope', description);
  }
}

export class AccessDeniedError extends OAuthError {
  constructor(description?: string) {
    super('access_denied', description);
  }
}

export class UnsupportedResponseTypeError extends OAuthError {
  constructor(description?: string) {
    super('unsupported_response_type', description);
  }
}

export class AuthorizationPendingError extends OAuthError {
  constructor() {
    super('authorization_pending');
  }
}

export class SlowDownError extends OAuthError {
  constructor() {
    super('slow_down');
  }
}

export class ExpiredTokenError extends OAuthError {
  constructor() {
    super('expired_token');
  }
}

export class InvalidRedirectUriError extends OAuthError {
  constructor(description?: string) {
    super('invalid_redirect_uri', description);
  }
}

/**
 * RFC 6750 §3.1 `invalid_token` at `/oauth/token/info` and `/oauth/userinfo`: 401 with a
 * Bearer challenge; the body keeps Doorkeeper's `state: "unauthorized"` (reference §2.6).
 */
export class OAuthInvalidTokenError extends OAuthError {
  constructor(description = OAUTH_DESCRIPTIONS.invalid_token) {
    super('invalid_token', description, 401);
    this.headers['www-authenticate'] = `Bearer realm="Basalt", error="invalid_token", error_description="${description}"`;
  }
  override body(): Record<string, string> {
    return { ...super.body(), state: 'unauthorized' };
  }
}

/** RFC 6750 §3.1 `insufficient_scope`: 403 naming the scope that is needed. */
export class OAuthInsufficientScopeError extends OAuthError {
  constructor(readonly scope: string) {
    super('insufficient_scope', `Access to this resource requires scope ${scope}.`, 403);
    this.headers['www-authenticate'] = `Bearer realm="Basalt", error="insufficient_scope", scope="${scope}"`;
  }
  override body(): Record<string, string> {
    return { ...super.body(), scope: this.scope };
  }
}
