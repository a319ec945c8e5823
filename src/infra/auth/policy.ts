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

const READ: readonly Scope[] = ['api', 'read_api'];
const WRITE: readonly Scope[] = ['api'];
// Every request with a token asks this; a route's answer never changes, so it is kept.
const accepted = new WeakMap<RoutePolicy, { read: readonly Scope[]; write: readonly Scope[] }>();

export function acceptedScopes(policy: RoutePolicy, method: string): readonly Scope[] {
  let entry = accepted.get(policy);
  if (!entry) {
    const extra = policy.scopes ?? [];
    entry = { read: [...new Set<Scope>([...READ, ...extra])], write: [...new Set<Scope>([...WRITE, ...extra])] };
    accepted.set(policy, entry);
  }
  return method === 'GET' || method === 'HEAD' ? entry.read : entry.write;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    policy?: RoutePolicy;
  }
}
