import type { Platform } from '../../infra/platform.js';
import type { GitModule } from '../git/index.js';
import type { IdentityModule } from '../identity/index.js';
import type { OAuthModule } from '../oauth/index.js';
import type { ProjectsModule } from '../projects/index.js';

export interface AdminModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
  oauth: OAuthModule;
  git: GitModule;
  /** The server's version, shown on the system page. */
  version: string;
}

export interface AdminPageDeps extends AdminModuleDeps {
  platform: Platform;
}
