import type { Scope } from './actor.js';

/**
 * The policy a route declares in its route table (CONVENTIONS.md rule 1). One hook
 * (auth-hook.ts) enforces it; handlers do not re-check credentials.
 */
export interface RoutePolicy {
  /**
   * `none`: no credential is read (pages, OAuth, ingestion with their own keys);
   * `optional`: public data for anonymous callers, more for signed-in ones;
   * `required`: 401 without a valid credential.
   */
  readonly auth: 'none' | 'optional' | 'required';
  /**
   * Scopes that satisfy this route; a token needs any one of them. Default: `api`, and
   * `read_api` on GET/HEAD.
   */
  readonly scopes?: readonly Scope[];
  /** Administrators only (403 otherwise). */
  readonly admin?: boolean;
  /** The route is on the job-token allow-list. */
  readonly jobToken?: boolean;
  /** The route answers a session cookie (pages and the API do; off for machine endpoints). */
  readonly session?: boolean;
  /** Name of an extra per-endpoint rate limit (config RATE_LIMITS). */
  readonly rateLimit?: string;
}

export function acceptedScopes(policy: RoutePolicy, method: string): readonly Scope[] {
  const base: Scope[] = method === 'GET' || method === 'HEAD' ? ['api', 'read_api'] : ['api'];
  return policy.scopes ? [...new Set<Scope>([...base, ...policy.scopes])] : base;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    policy?: RoutePolicy;
  }
}
