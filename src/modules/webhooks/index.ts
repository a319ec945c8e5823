import { NotFoundError } from '../../infra/errors/index.js';
import { noRootRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import { AccessLevel, namespaceCrumbs } from '../projects/index.js';
import { Deliveries, WEBHOOK_OUTBOX_KIND, type QueuedDelivery } from './deliveries.service.js';
import { DELIVERY_ATTEMPTS, deliveryBackoffMs } from './failure.rules.js';
import { HooksRepository } from './hooks.repository.js';
import { HooksService } from './hooks.service.js';
import { TestSamples } from './samples.service.js';
import { TokenSeal } from './token-seal.service.js';
import { HookTriggers } from './triggers.service.js';
import type { WebhooksDeps, WebhooksModuleDeps } from './webhooks.deps.js';
import { webhooksPages } from './webhooks.pages.js';
import { HOOK_PAGES } from './webhooks.views.js';
import { webhooksRoutes } from './webhooks.routes.js';

export type { WebhooksModuleDeps } from './webhooks.deps.js';
export { WEBHOOK_OUTBOX_KIND } from './deliveries.service.js';
export type { HooksService } from './hooks.service.js';

/** Project and group webhooks under `/api/v4`, Settings > Webhooks on the page layer; deliveries through the outbox. */
export interface WebhooksModule extends ModuleRoutes {
  readonly hooks: HooksService;
}

export function createWebhooksModule(platform: Platform, deps: WebhooksModuleDeps): WebhooksModule {
  const { db, clock, config, bus, outbox } = platform;
  const rows = new HooksRepository(db);
  const seal = new TokenSeal(config.secretKeyBase);
  const hooks = new HooksService(rows, clock, seal, config.webhookAllowLocalNetwork);
  const deliveries = new Deliveries(db, rows, clock, seal, {
    version: deps.version,
    instance: config.externalUrl,
    allowLocal: config.webhookAllowLocalNetwork,
  });
  const triggers = new HookTriggers(rows, outbox, clock, config.tier, config.externalUrl, {
    projects: deps.projects.projects,
    issues: deps.projects.issues,
    users: deps.identity.users,
  });
  const samples = new TestSamples(triggers, deps.projects.projects, deps.projects.groups, deps.projects.issues, config.externalUrl);

  // Pushes, issues and comments queue their deliveries in the publisher's transaction.
  bus.subscribeToChanges(triggers.handle);
  outbox.register(WEBHOOK_OUTBOX_KIND, {
    send: (item) => deliveries.send(item.payload as QueuedDelivery, item.messageId),
    maxAttempts: DELIVERY_ATTEMPTS,
    backoffMs: deliveryBackoffMs,
  });

  const { lookup } = deps.projects;
  const routeDeps: WebhooksDeps = {
    platform,
    lookup,
    hooks,
    deliveries,
    samples,
    projectOwner: async (request, ref) => {
      const { project } = await lookup.project(request, ref, AccessLevel.MAINTAINER);
      return { owner: { kind: 'project', id: project.id }, project: () => Promise.resolve(project) };
    },
    groupOwner: async (request, ref) => {
      // Group webhooks are a Premium and Ultimate feature: on Free the address names nothing.
      if (config.tier === 'free') throw new NotFoundError();
      const { group } = await lookup.group(request, ref, AccessLevel.OWNER);
      return { owner: { kind: 'group', id: group.id }, project: (actor) => samples.groupProject(group, actor) };
    },
    trail: (project, viewer, scope) => deps.projects.trails.of(project, viewer, scope),
    groupTrail: (group, viewer) => namespaceCrumbs(deps.projects, group, viewer),
  };

  // The group's page links its hooks for Owners, where the tier has group hooks.
  deps.projects.pageExtensions.registerGroupSettingsLink((group, level) =>
    config.tier !== 'free' && level >= AccessLevel.OWNER ? { label: 'Webhooks', href: HOOK_PAGES.group(group.full_path) } : null,
  );

  return {
    hooks,
    routes: (app) => webhooksRoutes(app, routeDeps),
    rootRoutes: noRootRoutes,
    pages: (web) => webhooksPages(web, routeDeps),
  };
}
