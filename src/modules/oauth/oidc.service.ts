import { ALL_SCOPES } from '../../infra/auth/index.js';
import { OAuthInsufficientScopeError } from '../../infra/errors/index.js';
import type { UsersService } from '../identity/index.js';
import type { IdTokenRequest } from './grants/grant-context.js';
import type { SigningKeys } from './keys.service.js';
import { DEVICE_CODE_GRANT, OAUTH_DEFAULTS } from './oauth.defaults.js';
import { mapUserClaims } from './oauth.presenter.js';
import type { ActiveToken } from './tokens.service.js';

const CLAIMS = ['sub', 'name', 'nickname', 'preferred_username', 'email', 'email_verified', 'profile'] as const;

/** OpenID Connect on top of the OAuth provider: id_token, userinfo, discovery (reference §2.8). */
export class OidcService {
  constructor(
    private readonly users: UsersService,
    private readonly keys: SigningKeys,
    private readonly issuer: string,
  ) {}

  /** OIDC Core §3.1.3.6: an RS256 id_token whenever `openid` was granted. */
  async idToken(request: IdTokenRequest): Promise<string | null> {
    if (!request.scopes.includes('openid')) return null;
    const user = await this.users.get(request.userId);
    const { sub, ...claims } = mapUserClaims(user, request.scopes, this.issuer);
    return this.keys.signIdToken(
      {
        sub: String(sub),
        aud: request.application.uid,
        nonce: request.nonce,
        authTime: request.authTime ?? user.current_sign_in_at,
        extra: claims,
      },
      OAUTH_DEFAULTS.idTokenTtlSeconds,
    );
  }

  /** OIDC Core §5.3: needs a live token with `openid` (RFC 6750 §3.1 insufficient_scope otherwise). */
  async userinfo(token: ActiveToken): Promise<Record<string, unknown>> {
    if (!token.scopes.includes('openid')) throw new OAuthInsufficientScopeError('openid');
    return mapUserClaims(await this.users.get(token.user.id), token.scopes, this.issuer);
  }

  /** OIDC Discovery 1.0 §3 / RFC 8414 §2. */
  discovery() {
    const base = this.issuer;
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      introspection_endpoint: `${base}/oauth/introspect`,
      userinfo_endpoint: `${base}/oauth/userinfo`,
      jwks_uri: `${base}/oauth/discovery/keys`,
      device_authorization_endpoint: `${base}/oauth/authorize_device`,
      scopes_supported: [...ALL_SCOPES],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      claim_types_supported: ['normal'],
      claims_supported: ['iss', 'aud', 'exp', 'iat', 'nonce', 'auth_time', ...CLAIMS],
      code_challenge_methods_supported: [...OAUTH_DEFAULTS.pkceMethods],
      authorization_response_iss_parameter_supported: true,
    };
  }
}
