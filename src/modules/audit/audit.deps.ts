import type { Platform } from '../../infra/platform.js';
import type { ProjectLookup, ProjectsModule } from '../projects/index.js';
import type { AuditService } from './audit.service.js';

/** What the audit module is built with: the core, for the group and project lookups. */
export interface AuditModuleDeps {
  projects: ProjectsModule;
}

/** What the audit routes receive. */
export interface AuditDeps {
  platform: Platform;
  audit: AuditService;
  lookup: ProjectLookup;
}
