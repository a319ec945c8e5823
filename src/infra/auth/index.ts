export type { Actor, ActorUser, Credential, CredentialKind, Scope } from './actor.js';
export { API_SCOPES, OIDC_SCOPES, ALL_SCOPES, isTokenCredential } from './actor.js';
export type { RoutePolicy } from './policy.js';
export { acceptedScopes } from './policy.js';
export type { CredentialResolvers, ResolvedToken, ResolvedJob, ResolvedSession } from './resolvers.js';
export { ResolverRegistry } from './resolvers.js';
export { createAuthHook } from './auth-hook.js';
export { basicCredentials, bearerToken, header } from './credentials.js';
