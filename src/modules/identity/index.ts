/**
 * Identity: users, passwords, sessions and the sign-in page, and every token kind that is
 * a row of `personal_access_tokens` (personal, impersonation, project, group).
 *
 * `identity.pageAuth` (page-auth.service.ts) is what the page layer (src/web) asks through its
 * ports: the signed-in person of a request's session cookie, and the CSRF token bound to it.
 * Pages of every module get both from `request.page`, never from here.
 */
import { noRootRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import { bootstrapRoot } from './bootstrap.service.js';
import type { IdentityModuleDeps } from './identity.deps.js';
import { identityRoutes } from './identity.routes.js';
import { InternalUsers } from './internal-users.service.js';
import { PageAuth } from './page-auth.service.js';
import { resourceTokenRoutes } from './resource-tokens.routes.js';
import { ResourceTokensService } from './resource-tokens.service.js';
import { SessionsRepository } from './sessions.repository.js';
import { SESSION_COOKIE, SessionsService } from './sessions.service.js';
import { SignInService } from './sign-in.service.js';
import { signInPages } from './sign-in.routes.js';
import { SignInAddresses, SignInAddressesRepository } from './sign-in-addresses.service.js';
import { accessTokensPages } from './access-tokens.page-routes.js';
import { passwordPages } from './password.page-routes.js';
import { profileSettingsPages } from './profile.page-routes.js';
import { TokensRepository } from './tokens.repository.js';
import { TABLE_TOKEN_CREDENTIALS, TokensService } from './tokens.service.js';
import { UsersRepository } from './users.repository.js';
import { UsersService, toActorUser } from './users.service.js';
import { IDENTITY_CREDENTIALS_TABLES } from './identity.epochs.js';

export type { IdentityModuleDeps } from './identity.deps.js';
export { UsersService, toActorUser } from './users.service.js';
export { TokensService } from './tokens.service.js';
export type { UserRow } from './users.repository.js';
export type { TokenRow } from './tokens.repository.js';
export { mapUserBasic, mapUser } from './identity.presenter.js';
/** Response schemas other modules embed (a snippet's author, an event's author…). */
export { UserBasic as UserBasicSchema, User as UserSchema } from './identity.schemas.js';
export { PageAuth } from './page-auth.service.js';
export { SESSION_COOKIE } from './sessions.service.js';
export { SettingsNav, SETTINGS_PAGES, settingsCrumbs, type SettingsPage } from './settings-nav.views.js';
export type { MembershipPort } from './resource-tokens.service.js';
export type { InternalUsers, InternalUserSpec } from './internal-users.service.js';
export type { ResourceLookupPort } from './resource-tokens.routes.js';

/**
 * Users, tokens (project and group access tokens too) under `/api/v4`; pages: `/users/sign_in`,
 * `/users/sign_out`, `/profile` and the user settings `/-/user_settings/{profile,
 * personal_access_tokens,password/edit}`.
 */
export interface IdentityModule extends ModuleRoutes {
  readonly users: UsersService;
  readonly tokens: TokensService;
  readonly sessions: SessionsService;
  /** Sign-in state and CSRF for page routes of every module (see the comment above). */
  readonly pageAuth: PageAuth;
  /** The users system features act as; a module registers its own when it is created. */
  readonly internalUsers: InternalUsers;
  /** At start-up, before the server listens: `root`, then every registered internal user. */
  bootstrap(): Promise<void>;
}

export function createIdentityModule(platform: Platform, deps: IdentityModuleDeps): IdentityModule {
  // Writes to these tables bump the epoch wherever they are made (infra/db/epoch-bumps.ts).
  platform.database.epochs.declare('credentials', IDENTITY_CREDENTIALS_TABLES);
  const { config, db, clock } = platform;
  const userRows = new UsersRepository(db);
  const sessions = new SessionsService(db, new SessionsRepository(db), clock, {
    idleTimeoutMs: config.sessionIdleTimeoutMinutes * 60_000,
    maxLifetimeMs: config.sessionMaxLifetimeDays * 86_400_000,
  });
  const users = new UsersService(db, userRows, clock, platform.bus, sessions);
  const tokens = new TokensService(
    db,
    new TokensRepository(db),
    clock,
    config.maxAccessTokenLifetimeDays,
    platform.bus,
    platform.database.transact,
  );
  const pageAuth = new PageAuth(sessions, config);
  const internalUsers = new InternalUsers(db, userRows, users);
  const signInAddresses = new SignInAddresses(db, new SignInAddressesRepository(db), clock, platform.bus);
  const signIn = new SignInService(users, sessions, platform.limiter, config.rateLimits.sign_in, signInAddresses);
  const resourceTokens = new ResourceTokensService(db, users, tokens, config, clock);
  platform.resolvers.register({
    accessToken: (secret) => tokens.resolve(secret),
    // Runs only for requests that carried no token (the hook's order), and costs nothing without the cookie.
    session: (request) => sessions.resolve(request.cookies[SESSION_COOKIE]),
    csrfTokenValid: (request) => pageAuth.verifyPageCsrf(request),
    userByIdOrUsername: async (value) => {
      const user = await users.findByIdOrUsername(value);
      return user ? toActorUser(user) : null;
    },
    revokedTokenReplayed: async (kind, id, ip) => {
      if (TABLE_TOKEN_CREDENTIALS.has(kind)) await tokens.revokeFamily(id, ip);
    },
    tokenUsed: (kind, id) => {
      if (kind !== 'oauth_token') tokens.markUsed(id);
    },
  });
  return {
    users,
    tokens,
    sessions,
    pageAuth,
    internalUsers,
    bootstrap: async () => {
      await bootstrapRoot(platform, users, tokens);
      await internalUsers.ensureAll();
    },
    routes: (app) => {
      identityRoutes(app, { platform, users, tokens });
      const { lookup, members } = deps.resources();
      resourceTokenRoutes(app, { platform, service: resourceTokens, lookup, members });
    },
    rootRoutes: noRootRoutes,
    pages: (web) => {
      signInPages(web, { platform, users, signIn, pageAuth });
      profileSettingsPages(web, users);
      accessTokensPages(web, tokens);
      passwordPages(web, users, signIn);
    },
  };
}
