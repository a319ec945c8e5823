import type { UserRow } from '../identity/index.js';
import type { IssuedToken } from './tokens.service.js';
import { splitRedirectUris } from './redirect-uri.rules.js';
import type { AccessTokenRow, ApplicationRow } from './oauth.storage.js';
import { splitScopes } from './scopes.rules.js';

/**
 * SPEC "Token response": `token_type` is `bearer` for the authorization code flows and
 * `Bearer` with `scope` for the device flow; `expires_in` 7200; `created_at` Unix time.
 * `id_token` is added when `openid` was granted (OIDC Core §3.1.3.3).
 */
export function mapTokenResponse(issued: IssuedToken, flow: 'code' | 'device', expiresIn: number, idToken: string | null) {
  const body: Record<string, string | number> = {
    access_token: issued.accessToken,
    token_type: flow === 'device' ? 'Bearer' : 'bearer',
    expires_in: expiresIn,
  };
  if (issued.refreshToken) body.refresh_token = issued.refreshToken;
  if (flow === 'device') body.scope = issued.row.scopes;
  body.created_at = Math.floor(issued.row.created_at / 1000);
  if (idToken) body.id_token = idToken;
  return body;
}

/** SPEC "Token information", with the deprecated aliases `scopes` and `expires_in_seconds` (rule 8). */
export function mapTokenInfo(token: AccessTokenRow, applicationUid: string, expiresIn: number | null) {
  const scope = splitScopes(token.scopes);
  return {
    resource_owner_id: token.user_id,
    scope,
    expires_in: expiresIn,
    application: { uid: applicationUid },
    created_at: Math.floor(token.created_at / 1000),
    scopes: scope,
    expires_in_seconds: expiresIn,
  };
}

/** Reference §2.10 Application entity: no secret, no scopes. */
export function mapApplication(app: ApplicationRow) {
  return {
    id: app.id,
    application_id: app.uid,
    application_name: app.name,
    callback_url: splitRedirectUris(app.redirect_uri).join('\n'),
    confidential: app.confidential === 1,
  };
}

/** ApplicationWithSecret: the plain secret, shown this once. */
export function mapApplicationWithSecret(app: ApplicationRow, secret: string) {
  return { ...mapApplication(app), secret };
}

/**
 * OpenID Connect claims (reference §2.8): `email` is the primary address with the `email`
 * scope, otherwise the public one; empty values are dropped.
 */
export function mapUserClaims(user: UserRow, scopes: readonly string[], baseUrl: string): Record<string, unknown> {
  const withEmail = scopes.includes('email');
  const email = withEmail ? user.email : user.public_email;
  const claims: Record<string, unknown> = {
    sub: String(user.id),
    name: user.name,
    nickname: user.username,
    preferred_username: user.username,
    profile: `${baseUrl}/${user.username}`,
  };
  if (email) {
    claims.email = email;
    claims.email_verified = withEmail ? user.confirmed_at !== null : true;
  }
  return claims;
}
