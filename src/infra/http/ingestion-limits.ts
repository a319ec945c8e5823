import type { RateLimit, RateLimitName } from '../../config/index.js';
import type { RateLimiter } from './rate-limiter.js';

/** The public ingestion doors: the alert receiver and the Sentry collector. */
export type IngestionDoor = 'alerts' | 'collector';

/** Which limit refused a request: the sender's own, or the project's ceiling. */
export type IngestionScope = 'sender' | 'project';

export interface IngestionLimits {
  /** Per client address and credential (the DSN key, the alert integration). */
  readonly perSender: RateLimit | undefined;
  /** Per project, over every sender: a ceiling many addresses together cannot pass. */
  readonly perProject: RateLimit | undefined;
}

export function ingestionLimits(limits: Readonly<Partial<Record<RateLimitName, RateLimit>>>, door: IngestionDoor): IngestionLimits {
  return { perSender: limits[door], perProject: limits[`${door}_project`] };
}

/** The limit name a refusal's `RateLimit-Name` header carries (`throttle_<name>`), read back as its scope. */
export function ingestionScope(rateLimitName: string | undefined, door: IngestionDoor): IngestionScope {
  return rateLimitName === `throttle_${door}_project` ? 'project' : 'sender';
}

/**
 * Counts one accepted-credential request under the sender's limit, then under the project's.
 * In-process or Redis counters only: no database query. The sender's limit comes first, so a
 * sender already refused does not spend the ceiling the project's other senders share.
 * Throws the limiter's 429 (`Retry-After`, `RateLimit-*`).
 */
export async function enforceIngestionLimits(
  limiter: RateLimiter,
  door: IngestionDoor,
  limits: IngestionLimits,
  sender: { address: string; credential: string | number },
  projectId: number,
): Promise<void> {
  await limiter.enforce(door, `ip:${sender.address}:${sender.credential}`, limits.perSender);
  await limiter.enforce(`${door}_project`, `project:${projectId}`, limits.perProject);
}
