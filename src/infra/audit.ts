import type { Actor, ActorUser } from './auth/index.js';

/** What an audit event is about: a user, a group, a project or the instance. */
export type AuditEntityType = 'User' | 'Group' | 'Project' | typeof INSTANCE_SCOPE;

/** The entity of instance-wide events (application settings, storage moves), as the established product names it; its id is 1. */
export const INSTANCE_SCOPE = 'Gitlab::Audit::InstanceScope';

/**
 * One audit event as the owning service publishes it (the bus event `audited`). The audit
 * module writes it with the publisher's executor, so it commits or rolls back with the change.
 * `details` never holds a secret: services pass names, scopes, levels and ids only. Services build
 * it with `auditEntry`, so every entry has one shape (see there).
 */
export interface AuditEntry {
  /** Who acted; -1 for an unknown author (a failed sign-in under a login that names nobody). */
  authorId: number;
  authorName: string;
  entityType: AuditEntityType;
  entityId: number;
  /** The group's or project's full path, the user's username; null for the instance. */
  entityPath: string | null;
  targetType: string | null;
  targetId: number | null;
  /** A readable name of the target (a token's name, a member's username). */
  targetDetails: string | null;
  /** What happened, in the established product's snake case (`personal_access_token_created`). */
  eventName: string;
  /** Extra facts (`{ add: 'user_access', as: 'Developer' }`); never a token, password or key. */
  details: AuditDetails;
  ipAddress: string | null;
  at: number;
}

export type AuditDetails = Readonly<Record<string, string | number | boolean | null | readonly string[]>>;

/** Who acted, as an entry names them. */
export interface AuditAuthor {
  authorId: number;
  authorName: string;
  ipAddress: string | null;
}

/** What an entry says besides its author; the target's fields and `details` may be left out. */
export interface AuditFacts {
  entityType: AuditEntityType;
  entityId: number;
  entityPath: string | null;
  targetType?: string | null;
  targetId?: number | null;
  targetDetails?: string | null;
  eventName: string;
  details?: AuditDetails;
  at: number;
}

const NO_DETAILS: AuditDetails = Object.freeze({});

/**
 * An entry from its author and its facts, every field present and in one order. Why not a
 * spread (`{ ...author, entityType, … }`): V8 gives a clone made by a spread a map of its own
 * before the following fields are added, so every such entry had a new shape. Under load that
 * took 10 µs a token creation, and every later read of the entry (its queue row's text) paid for
 * the shapes again (docs/performance.md "Audit").
 */
export function auditEntry(author: AuditAuthor, facts: AuditFacts): AuditEntry {
  return {
    authorId: author.authorId,
    authorName: author.authorName,
    entityType: facts.entityType,
    entityId: facts.entityId,
    entityPath: facts.entityPath,
    targetType: facts.targetType ?? null,
    targetId: facts.targetId ?? null,
    targetDetails: facts.targetDetails ?? null,
    eventName: facts.eventName,
    details: facts.details ?? NO_DETAILS,
    ipAddress: author.ipAddress,
    at: facts.at,
  };
}

/** The author of what the server does on its own (start-up, the command line, a job). */
export const SYSTEM_AUTHOR: AuditAuthor = Object.freeze({ authorId: -1, authorName: 'system', ipAddress: null });

/** The author fields of an entry from who acted (the administrator behind Sudo is named in `details`). */
export function auditAuthor(actor: Actor | ActorUser | null | undefined): AuditAuthor {
  if (!actor) return { authorId: -1, authorName: 'An unauthenticated user', ipAddress: null };
  if (!('user' in actor)) return { authorId: actor.id, authorName: actor.username, ipAddress: null };
  // An actor of a request carries its address (infra/auth): every event it causes records it.
  return { authorId: actor.user.id, authorName: actor.user.username, ipAddress: actor.ip ?? null };
}

/** `details` with `impersonated_by` added when an administrator acts through Sudo; else `details` itself. */
export function withSudo(details: AuditDetails, actor: Actor | null | undefined): AuditDetails {
  return actor?.sudoer ? { ...details, impersonated_by: actor.sudoer.username } : details;
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
  details: AuditDetails,
  at: number,
): { type: 'audited'; entry: AuditEntry; at: number } {
  const entry = auditEntry(by ? auditAuthor(by) : SYSTEM_AUTHOR, {
    entityType: 'Project',
    entityId: project.id,
    entityPath: project.full_path,
    targetType: target.type,
    targetId: target.id,
    targetDetails: target.details,
    eventName,
    details: withSudo(details, by),
    at,
  });
  return { type: 'audited', entry, at };
}
