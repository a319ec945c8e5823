import type { Registry } from 'prom-client';
import type { OpenApiCollector } from './openapi.service.js';

/** What the operations module is built with. */
export interface OperationsModuleDeps {
  /** The Basalt version `/api/v4/metadata` and the OpenAPI document state. */
  version: string;
  /** The request metrics `/-/metrics` exposes. */
  metrics: Registry;
  /** Attached to the app before any route is registered, so it has seen them all. */
  openapi: OpenApiCollector;
  /** Whether the instance is shedding load or its pool is backed up (readiness fails). */
  overloaded: () => boolean;
}
