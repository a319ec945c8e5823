import { noRootRoutes, type ModuleRoutes, type Platform } from '../../infra/platform.js';
import type { AuditModuleDeps } from './audit.deps.js';
import { AuditRepository } from './audit.repository.js';
import { auditRoutes } from './audit.routes.js';
import { AuditService } from './audit.service.js';
import { registerAuditRetention } from './retention.jobs.js';

export type { AuditModuleDeps } from './audit.deps.js';
export type { AuditService, AuditScope } from './audit.service.js';
export { AUDIT_RETENTION_JOB } from './retention.jobs.js';

/** The audit trail: its bus subscriber, the audit events API and the daily retention job. */
export interface AuditModule extends ModuleRoutes {
  readonly audit: AuditService;
  /** Enqueues the retention job unless one is pending (done when the server is ready). */
  scheduleRetention(): Promise<void>;
}

export function createAuditModule(platform: Platform, deps: AuditModuleDeps): AuditModule {
  const { db, clock, config, jobs, bus } = platform;
  const events = new AuditRepository(db);
  const audit = new AuditService(events, clock, platform.metrics, config.auditEventsRetentionDays);
  bus.subscribe(['audited'], audit.handle);
  // Sudo and impersonation use change nothing to share a transaction with: written in their own.
  platform.resolvers.register({
    privilegedUse: (actor, request) =>
      audit.recordPrivilegedUse(actor, request.ip, `${request.method} ${request.routeOptions.url ?? ''}`, (entry) =>
        db.transaction().execute((trx) => audit.record(entry, trx)),
      ),
  });
  const retention = registerAuditRetention(db, jobs, clock, audit);
  return {
    audit,
    scheduleRetention: () => retention.schedule(),
    routes: (app) => auditRoutes(app, { platform, audit, lookup: deps.projects.lookup }),
    rootRoutes: async (app) => {
      app.addHook('onReady', () => retention.schedule());
      await noRootRoutes();
    },
  };
}
