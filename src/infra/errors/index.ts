export * from './app-errors.js';
export {
  OAuthError,
  OAUTH_DESCRIPTIONS,
  InvalidRequestError,
  InvalidClientError,
  InvalidGrantError,
  UnauthorizedClientError,
  UnsupportedGrantTypeError,
  InvalidScopeError,
  AccessDeniedError,
  UnsupportedResponseTypeError,
  AuthorizationPendingError,
  SlowDownError,
  ExpiredTokenError,
  InvalidRedirectUriError,
  OAuthInvalidTokenError,
  OAuthInsufficientScopeError,
} from './oauth-errors.js';
export type { OAuthErrorCode } from './oauth-errors.js';
export { apiErrorHandler, oauthErrorHandler } from './handlers.js';
