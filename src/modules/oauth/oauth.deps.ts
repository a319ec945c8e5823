import type { IdentityModule } from '../identity/index.js';

/** What the OAuth module is built with. */
export interface OAuthModuleDeps {
  identity: IdentityModule;
}
