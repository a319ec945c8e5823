/**
 * Protocol lifetimes and policy of the OAuth 2.0 provider, each beside the rule it follows
 * (CONVENTIONS.md rule 5). Nothing else in the module hard-codes a number of seconds.
 */
export const OAUTH_DEFAULTS = {
  /** SPEC "Limits": access tokens live 7200 s; the token response says `expires_in: 7200`. */
  accessTokenTtlSeconds: 7200,
  /** RFC 6749 §4.1.2: codes expire shortly after issue (≤10 min RECOMMENDED); we use 60 s (RFC 9700 §4.5). */
  authorizationCodeTtlSeconds: 60,
  /** Refresh tokens do not expire (reference §2.1); they rotate on every use (RFC 9700 §4.14.2). */
  refreshTokenTtlSeconds: null,
  /** RFC 8628 §3.2 and SPEC: `expires_in` 300 and `interval` 5 in the device authorization response. */
  deviceCodeTtlSeconds: 300,
  devicePollIntervalSeconds: 5,
  /** RFC 8628 §3.5: every `slow_down` adds 5 s to the interval for this and all later polls. */
  slowDownIncrementSeconds: 5,
  /** RFC 8628 §6.1: base-20 alphabet without vowels or look-alikes, 8 characters (~34.5 bits). */
  userCodeAlphabet: 'BCDFGHJKLMNPQRSTVWXZ',
  userCodeLength: 8,
  /** RFC 6749 §10.10: secrets at least 128 bits; ours carry 256 (32 random bytes). */
  secretBytes: 32,
  /** RFC 7636 §4.2: a challenge is 43–128 unreserved characters (S256 gives 43 base64url ones). */
  pkceChallengePattern: /^[A-Za-z0-9\-._~]{43,128}$/,
  /**
   * RFC 7636 §4.1 asks verifiers of 43–128 unreserved characters, but the established product
   * (Doorkeeper) checks only the S256 digest, and clients rely on it: git-credential-oauth
   * 0.4.2–0.9.x sends 44 characters of padded standard base64 (`+`, `/`, `=`). Length is kept
   * and the alphabet is any printable ASCII but space (security checklist B2); the digest
   * comparison is what protects the code.
   */
  pkceVerifierPattern: /^[\x21-\x7e]{43,128}$/,
  /** RFC 9700 §2.1.1: S256 only; `plain` is refused with `invalid_request` (reference README). */
  pkceMethods: ['S256'] as const,
  /**
   * RFC 9700 §2.1.1 / RFC 7636: PKCE is required for public clients. Confidential clients may
   * use the SPEC's "authorization code (client secret required)" flow without it.
   */
  pkceRequiredForConfidential: false,
  /** OIDC Core §2: the id_token lives briefly; it is for the client, not for API calls. */
  idTokenTtlSeconds: 120,
  /** Reference §2.2: `scope` omitted at /oauth/authorize means `api` (intersected with the app's). */
  defaultScopes: ['api'] as const,
  /** Bounds on what we accept and store. */
  maxRedirectUris: 10,
  maxRedirectUriLength: 2000,
  maxStateLength: 1024,
  maxNonceLength: 512,
  maxNameLength: 255,
  maxParameterLength: 4096,
} as const;

/** RFC 8628 §3.4. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** RFC 6749 §3.1.2 plus reference §2.2: schemes a redirect URI may never use. */
export const FORBIDDEN_REDIRECT_SCHEMES = ['data:', 'javascript:', 'vbscript:', 'file:'] as const;

/** Scopes only administrators may register or be granted (reference §1.5 ADMIN_SCOPES). */
export const ADMIN_ONLY_SCOPES = ['sudo', 'admin_mode'] as const;
