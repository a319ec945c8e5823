import type { FastifyRequest } from 'fastify';
import type { Actor } from '../../infra/auth/index.js';
import type { Platform } from '../../infra/platform.js';
import type { Crumb } from '../../web/index.js';
import type { IdentityModule } from '../identity/index.js';
import type { NamespaceRow, ProjectLookup, ProjectRow, ProjectsModule } from '../projects/index.js';
import type { Deliveries } from './deliveries.service.js';
import type { HookOwner } from './hooks.repository.js';
import type { HooksService } from './hooks.service.js';
import type { TestSamples } from './samples.service.js';

/** What the webhooks module is built with. */
export interface WebhooksModuleDeps {
  identity: IdentityModule;
  projects: ProjectsModule;
  /** The version in the User-Agent of deliveries (`GitLab/<version>`, as receivers expect). */
  version: string;
}

/** A hook's owner found for a request, and the project its tests speak of. */
export interface ResolvedOwner {
  owner: HookOwner;
  /** For a project hook, the project; for a group hook, resolved when a test needs one. */
  project(actor: Actor): Promise<ProjectRow>;
}

/** What the webhooks routes and pages are built with. */
export interface WebhooksDeps {
  platform: Platform;
  lookup: ProjectLookup;
  hooks: HooksService;
  deliveries: Deliveries;
  samples: TestSamples;
  /** The project's hook owner at Maintainer or above (the page layer and the API both check). */
  projectOwner: (request: FastifyRequest, ref: string) => Promise<ResolvedOwner>;
  /** The group's hook owner at Owner (Premium and Ultimate only: 404 otherwise). */
  groupOwner: (request: FastifyRequest, ref: string) => Promise<ResolvedOwner>;
  trail(project: ProjectRow, viewer: Actor | null, scope?: object): Promise<Crumb[]>;
  /** The trail of a group page: its ancestry, the group itself last. */
  groupTrail(group: NamespaceRow, viewer: Actor | null): Promise<Crumb[]>;
}
