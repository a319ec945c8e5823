/**
 * The OAuth 2.0 / OpenID Connect provider (SPEC "OAuth 2.0 endpoints"): applications,
 * authorize + consent page, grants/ (one file per grant), device flow, token info, revoke,
 * userinfo, discovery. Small steps around one storage interface (oauth.storage.ts);
 * lifetimes and policy in oauth.defaults.ts.
 */
import { oauthErrorHandler } from '../../infra/errors/index.js';
import type { ApiApp } from '../../infra/http/index.js';
import type { ModuleRoutes, Platform } from '../../infra/platform.js';
import { ApplicationsService } from './applications.service.js';
import { applicationsApiRoutes } from './applications.routes.js';
import { applicationsPages, instanceApplicationsPages } from './applications.page-routes.js';
import type { ApplicationsArea } from './applications.pages.js';
import { authorizePages } from './authorize.routes.js';
import { AuthorizeService } from './authorize.service.js';
import { devicePages } from './device.routes.js';
import { DeviceService } from './device.service.js';
import { registerHousekeepingJob } from './housekeeping.jobs.js';
import { SigningKeys } from './keys.service.js';
import type { OAuthModuleDeps } from './oauth.deps.js';
import { OAuthRepository } from './oauth.repository.js';
import { oauthRoutes } from './oauth.routes.js';
import { OidcService } from './oidc.service.js';
import { OAuthTokens } from './tokens.service.js';
import { OAUTH_CREDENTIALS_TABLES } from './oauth.epochs.js';

export { OAUTH_DEFAULTS } from './oauth.defaults.js';
export type { OAuthModuleDeps } from './oauth.deps.js';
export type { ApplicationsService } from './applications.service.js';
export type { ApplicationsArea } from './applications.pages.js';
export type { OAuthTokens } from './tokens.service.js';

/**
 * `/api/v4/applications` (admin); at the root `/oauth/*` and `/.well-known/*` (own error
 * handler); on the page layer `/-/user_settings/applications` (and `/user_settings/applications`).
 */
export interface OAuthModule extends ModuleRoutes {
  readonly applications: ApplicationsService;
  readonly tokens: OAuthTokens;
  /** The instance-wide applications' pages at `/admin/applications`, in the admin area's frame. */
  instanceApplicationPages(web: ApiApp, frame: ApplicationsArea['frame']): void;
}

export function createOAuthModule(platform: Platform, deps: OAuthModuleDeps): OAuthModule {
  // Writes to these tables bump the epoch wherever they are made (infra/db/epoch-bumps.ts).
  platform.database.epochs.declare('credentials', OAUTH_CREDENTIALS_TABLES);
  const { config, clock } = platform;
  const issuer = config.externalUrl;
  const storage = new OAuthRepository(platform.db, platform.database.transact);
  const tokens = new OAuthTokens(storage, clock, platform.db, platform.bus);
  const applications = new ApplicationsService(storage, clock, platform.db, platform.bus);
  const keys = new SigningKeys(storage, clock, config.secretKeyBase, issuer);
  const oidc = new OidcService(deps.identity.users, keys, issuer);
  const authorize = new AuthorizeService(storage, clock, issuer, config.secretKeyBase);
  const device = new DeviceService(storage, clock, `${issuer}/oauth/device`);

  platform.resolvers.register({ oauthToken: (secret) => tokens.resolve(secret) });
  const housekeeping = registerHousekeepingJob(storage, platform.db, platform.jobs, clock);
  // A blocked user's past consents end with the block (docs/decisions.md): a refresh token or
  // an unexchanged code would otherwise go on minting tokens (and id_tokens) for them.
  platform.bus.subscribe(['user_blocked'], (event, executor) => tokens.endUserAccess(executor, event.userId, event.at));

  return {
    applications,
    tokens,
    routes: (app) => applicationsApiRoutes(app, applications, config.externalUrl),
    instanceApplicationPages: (web, frame) => instanceApplicationsPages(web, applications, frame),
    pages: (web) => {
      applicationsPages(web, applications);
      authorizePages(web, { authorize });
      devicePages(web, { device, limiter: platform.limiter, config });
    },
    // Everything at the root lives in a plugin of its own (its hooks and handlers stay the module's),
    // and the endpoints of the OAuth error format in one nested inside it.
    rootRoutes: async (app) => {
      await app.register(async (root) => {
        await root.register(async (scope) => {
          scope.setErrorHandler(oauthErrorHandler);
          // Pages holding codes must not leak them in Referer (RFC 9700 §4.2.4); framing and
          // scripts are refused on every page (infra/http/response-headers.ts PAGE_CSP, §4.16).
          scope.addHook('onSend', async (_request, reply, payload) => {
            if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) reply.header('referrer-policy', 'no-referrer');
            return payload;
          });
          oauthRoutes(scope, {
            storage,
            clock,
            tokens,
            device,
            oidc,
            keys,
            idToken: (r) => oidc.idToken(r),
            limiter: platform.limiter,
            limit: config.rateLimits.oauth,
          });
        });
        root.addHook('onReady', () => housekeeping.schedule());
      });
    },
  };
}
