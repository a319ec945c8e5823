import type { ModuleRoutes, Platform } from '../../infra/platform.js';
import { metadataRoutes } from './metadata.routes.js';
import type { OperationsModuleDeps } from './operations.deps.js';
import { operationsRoutes } from './operations.routes.js';

export { OpenApiCollector } from './openapi.service.js';
export { COMPATIBLE_VERSION } from './metadata.routes.js';
export { monitoringAllowed } from './operations.routes.js';
export type { OperationsModuleDeps } from './operations.deps.js';

/** `/api/v4/metadata`; at the root the probes, the metrics and the OpenAPI document. */
export type OperationsModule = ModuleRoutes;

export function createOperationsModule(platform: Platform, deps: OperationsModuleDeps): OperationsModule {
  return {
    routes: (api) => metadataRoutes(api, deps.version),
    rootRoutes: async (app) => operationsRoutes(app, platform, deps),
  };
}
