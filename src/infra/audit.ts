import type { Actor, ActorUser } from './auth/index.js';

/** What an audit event is about: a user, a group, a project or the instance. */
export type AuditEntityType = 'User' | 'Group' | 'Project' | typeof INSTANCE_SCOPE;

/** The entity of instance-wide events (application settings, storage moves), as the established product names it; its id is 1. */
export const INSTANCE_SCOPE = 'Gitlab::Audit::InstanceScope';

/**
 * One audit event as the owning service publishes it (the bus event `audited`). The audit
 * module writes it with the publisher's executor, so it commits or rolls back with the change.
 * `details` never holds a secret: services pass names, scopes, levels and ids only.
 */
export interface AuditEntry {
  /** Who acted; -1 for an unknown author (a failed sign-in under a login that names nobody). */
  authorId: number;
  authorName: string;
  entityType: AuditEntityType;
  entityId: number;
  /** The group's or project's full path, the user's username; null for the instance. */
  entityPath: string | null;
  targetType?: string | null;
  targetId?: number | null;
  /** A readable name of the target (a token's name, a member's username). */
  targetDetails?: string | null;
  /** What happened, in the established product's snake case (`personal_access_token_created`). */
  eventName: string;
  /** Extra facts (`{ add: 'user_access', as: 'Developer' }`); never a token, password or key. */
  details?: Record<string, string | number | boolean | null | readonly string[]>;
  ipAddress?: string | null;
  at: number;
}

/** The author fields of an entry from who acted (the administrator behind Sudo is named in `details`). */
export function auditAuthor(actor: Actor | ActorUser | null | undefined): { authorId: number; authorName: string; ipAddress?: string } {
  if (!actor) return { authorId: -1, authorName: 'An unauthenticated user' };
  if (!('user' in actor)) return { authorId: actor.id, authorName: actor.username };
  // An actor of a request carries its address (infra/auth): every event it causes records it.
  return actor.ip === undefined
    ? { authorId: actor.user.id, authorName: actor.user.username }
    : { authorId: actor.user.id, authorName: actor.user.username, ipAddress: actor.ip };
}

/** `{ impersonated_by }` when an administrator acts through Sudo, for an entry's details. */
export function sudoDetails(actor: Actor | null | undefined): { impersonated_by?: string } {
  return actor?.sudoer ? { impersonated_by: actor.sudoer.username } : {};
}

/**
 * The `audited` bus event of a change to something of a project (an alert integration, a
 * client key, a setting): author from `by` (`system` without one), entity the project.
 */
export function projectAudit(
  by: Actor | null | undefined,
  project: { id: number; full_path: string },
  eventName: string,
  target: { type: string; id: number | null; details: string | null },
  details: AuditEntry['details'],
  at: number,
): { type: 'audited'; entry: AuditEntry; at: number } {
  const author = by ? auditAuthor(by) : { authorId: -1, authorName: 'system' };
  const entry: AuditEntry = {
    ...author,
    entityType: 'Project',
    entityId: project.id,
    entityPath: project.full_path,
    targetType: target.type,
    targetId: target.id,
    targetDetails: target.details,
    eventName,
    details: { ...details, ...sudoDetails(by) },
    at,
  };
  return { type: 'audited', entry, at };
}
