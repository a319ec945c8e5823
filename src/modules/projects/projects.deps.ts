import type { Platform } from '../../infra/platform.js';
import type { UsersService } from '../identity/index.js';
import type { AccessPolicy } from './access.policy.js';
import type { GroupsService } from './groups.service.js';
import type { IssuesService } from './issues.service.js';
import type { MembersService } from './members.service.js';
import type { ProjectLookup } from './projects.lookup.js';
import type { ProjectsService } from './projects.service.js';
import type { SnippetsService } from './snippets.service.js';
import type { IdentityModule } from '../identity/index.js';
import type { SpamChecker } from '../spam/index.js';

export interface ProjectsRouteDeps {
  platform: Platform;
  users: UsersService;
  access: AccessPolicy;
  lookup: ProjectLookup;
  groups: GroupsService;
  projects: ProjectsService;
  members: MembersService;
  issues: IssuesService;
  snippets: SnippetsService;
}

/** What the projects module is built with. */
export interface ProjectsModuleDeps {
  identity: IdentityModule;
  /** Checks issues and snippets before they are stored; none when spam checking is not built. */
  spam: SpamChecker | null;
}
