import type { ResourceLookupPort } from './resource-tokens.routes.js';
import type { MembershipPort } from './resource-tokens.service.js';

/** What the identity module is built with. */
export interface IdentityModuleDeps {
  /**
   * The projects module's lookup and memberships, for project and group access tokens (their
   * bots become members). Asked for when routes are registered: the projects module is built
   * on identity, so it exists only after it.
   */
  resources: () => { lookup: ResourceLookupPort; members: MembershipPort };
}
