import type { FastifyRequest } from 'fastify';
import type { Actor, ActorUser, CredentialKind } from './actor.js';

/** A token found by a module's resolver, before the hook validates it (ATVS order). */
export interface ResolvedToken {
  readonly user: ActorUser;
  readonly kind: CredentialKind;
  readonly id: number;
  readonly scopes: readonly string[];
  readonly expiresAt: number | null;
  readonly revoked: boolean;
  readonly applicationUid?: string;
}

export interface ResolvedJob {
  readonly user: ActorUser;
  readonly id: number;
  readonly projectId: number;
  readonly running: boolean;
}

export interface ResolvedSession {
  readonly user: ActorUser;
  readonly id: number;
}

/**
 * The port through which modules teach infra/auth to recognise their credentials.
 * infra/auth fixes the order they are tried in and never reads their tables itself.
 */
export interface CredentialResolvers {
  /** Personal, impersonation, project and group tokens (identity). */
  accessToken?(secret: string): Promise<ResolvedToken | null>;
  /** OAuth access tokens (oauth). */
  oauthToken?(secret: string): Promise<ResolvedToken | null>;
  /** CI job tokens (projects). */
  jobToken?(secret: string): Promise<ResolvedJob | null>;
  /** The `_service_session` cookie; CSRF is checked by the hook. */
  session?(request: FastifyRequest): Promise<ResolvedSession | null>;
  /** The CSRF token expected for a session (identity). */
  csrfTokenValid?(request: FastifyRequest, sessionId: number): boolean;
  /** Sudo targets: a numeric ID or a case-insensitive username. */
  userByIdOrUsername?(value: string): Promise<ActorUser | null>;
  /** A revoked token was presented to a rotation path (reference §1.3) from `ip`: end its whole family. */
  revokedTokenReplayed?(kind: CredentialKind, id: number, ip: string): Promise<void>;
  /** Marks a token used (`last_used_at`), off the hot path. */
  tokenUsed?(kind: CredentialKind, id: number): void;
  /** A request acts through Sudo or an impersonation token (the audit trail records it). */
  privilegedUse?(actor: Actor, request: FastifyRequest): Promise<void>;
}

export class ResolverRegistry {
  private readonly resolvers: CredentialResolvers = {};

  register(resolvers: CredentialResolvers): void {
    Object.assign(this.resolvers, resolvers);
  }

  get current(): Readonly<CredentialResolvers> {
    return this.resolvers;
  }
}
