export * from './app-errors.js';
export { OAuthError, OAUTH_DESCRIPTIONS } from './oauth-errors.js';
export type { OAuthErrorCode } from './oauth-errors.js';
export { apiErrorHandler, oauthErrorHandler } from './handlers.js';
