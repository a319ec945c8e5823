import type { ApiApp } from '../../infra/http/index.js';
import type { Platform } from '../../infra/platform.js';
import { bootstrapRoot } from './bootstrap.js';
import { identityRoutes } from './identity.routes.js';
import { TokensService } from './tokens.service.js';
import { UsersService, toActorUser } from './users.service.js';

export { UsersService, toActorUser } from './users.service.js';
export { TokensService } from './tokens.service.js';
export type { UserRow } from './users.repository.js';
export type { TokenRow } from './tokens.repository.js';
export { mapUserBasic, mapUser } from './identity.presenter.js';

export interface IdentityModule {
  readonly users: UsersService;
  readonly tokens: TokensService;
  bootstrap(): Promise<void>;
  routes(app: ApiApp): void;
}

export function createIdentityModule(platform: Platform): IdentityModule {
  const users = new UsersService(platform.db, platform.clock, platform.bus);
  const tokens = new TokensService(platform.db, platform.clock);
  platform.resolvers.register({
    accessToken: (secret) => tokens.resolve(secret),
    userByIdOrUsername: async (value) => {
      const user = await users.findByIdOrUsername(value);
      return user ? toActorUser(user) : null;
    },
    tokenUsed: (kind, id) => {
      if (kind !== 'oauth_token') tokens.markUsed(id);
    },
  });
  return {
    users,
    tokens,
    bootstrap: () => bootstrapRoot(platform, users, tokens),
    routes: (app) => identityRoutes(app, { platform, users, tokens }),
  };
}
