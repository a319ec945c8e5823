import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/index.js';
import type { Clock } from '../clock.js';
import { ForbiddenError, InsufficientScopeError, InvalidTokenError, NotFoundMessageError, UnauthorizedError } from '../errors/index.js';
import type { RateLimiter } from '../http/rate-limiter.js';
import { actingFrom, isTokenCredential, type Actor } from './actor.js';
import { bearerToken, header, jobTokenValue, oauthStyleToken, privateToken, sudoValue } from './credentials.js';
import { acceptedScopes, type RoutePolicy } from './policy.js';
import type { ResolvedToken, ResolverRegistry } from './resolvers.js';
import { authenticateToken, TokenRefusal, type TokenActor } from './token-auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The resolved caller; `null` for anonymous requests and routes with `auth: 'none'`. */
    actor: Actor | null;
  }
}

export interface AuthDeps {
  readonly config: Config;
  readonly clock: Clock;
  readonly resolvers: ResolverRegistry;
  readonly limiter: RateLimiter;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const PERSONAL_PREFIX = 'bsp_';
const JOB_PREFIX = 'bsj_';

/**
 * Resolves every credential of SPEC "Authentication" in the order of reference §1.2
 * (job token, OAuth-style string, personal token, session) and enforces the route's policy.
 */
export function createAuthHook(deps: AuthDeps) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const policy = request.routeOptions.config.policy;
    if (!policy || policy.auth === 'none') return;
    let found: Found | null;
    try {
      found = await findCredential(deps, request, policy);
    } catch (error) {
      const refusal = error instanceof TokenRefusal ? error : null;
      if (refusal?.reason === 'revoked') await revokeReplayedFamily(deps, request, refusal.token);
      // A failed credential is an unauthenticated request: it counts against the IP's limit,
      // so guessing tokens is throttled like any anonymous traffic (reference §3.6). A blocked
      // user's token is refused as its sessions and jobs are, before any limit.
      if (refusal?.reason !== 'blocked') await enforceApiLimits(deps, request, null);
      throw refusal ? apiRefusal(refusal) : error;
    }
    let actor = found?.actor ?? null;
    if (actor && actor.user.state === 'blocked') throw blocked();

    const sudo = sudoValue(request);
    if (sudo !== undefined) {
      actor = await applySudo(deps, actor, found?.token ?? null, sudo);
    } else if (actor && found?.token) {
      const accepted = acceptedScopes(policy, request.method);
      if (!found.token.scopes.some((s) => (accepted as readonly string[]).includes(s))) throw new InsufficientScopeError(accepted);
    }

    await enforceApiLimits(deps, request, actor);
    if (!actor && policy.auth === 'required') throw new UnauthorizedError();
    if (policy.admin && !actor?.user.isAdmin) throw new ForbiddenError();
    // The request's address travels with who acts, for the audit events the action writes.
    request.actor = actor && actingFrom(actor, request.ip);
    if (found?.token) deps.resolvers.current.tokenUsed?.(found.token.kind, found.token.id);
    if (actor && (actor.sudoer || actor.credential.kind === 'impersonation_token')) {
      await deps.resolvers.current.privilegedUse?.(actor, request);
    }
  };
}

/** A job token or session has no `token`; an access or OAuth token is a TokenActor. */
type Found = TokenActor | { actor: Actor; token: null };

async function findCredential(deps: AuthDeps, request: FastifyRequest, policy: RoutePolicy): Promise<Found | null> {
  const resolvers = deps.resolvers.current;
  // Deploy tokens never authenticate on the API (SPEC "Authentication"); a job token
  // works only on the routes that allow it. Either one elsewhere is refused, not ignored.
  if (header(request, 'deploy-token') !== undefined) throw new UnauthorizedError();
  if (!policy.jobToken && jobTokenValue(request) !== undefined) throw new UnauthorizedError();

  if (policy.jobToken) {
    const bearer = bearerToken(request);
    const jobSecret = jobTokenValue(request) ?? (bearer?.startsWith(JOB_PREFIX) ? bearer : undefined);
    if (jobSecret !== undefined) {
      const job = resolvers.jobToken ? await resolvers.jobToken(jobSecret) : null;
      if (!job || !job.running) throw new UnauthorizedError();
      return {
        actor: { user: job.user, credential: { kind: 'job_token', id: job.id, scopes: null, projectId: job.projectId } },
        token: null,
      };
    }
  }

  // The OAuth-style string is tried as an OAuth token; if none matches, the PAT string follows (§1.2).
  const oauthSecret = oauthStyleToken(request);
  if (oauthSecret !== undefined && !oauthSecret.startsWith(PERSONAL_PREFIX)) {
    const token = await authenticateToken(deps, oauthSecret, 'oauth');
    if (token) return token;
  }

  const patSecret = privateToken(request);
  if (patSecret !== undefined) {
    const token = await authenticateToken(deps, patSecret, 'access');
    if (!token) throw new UnauthorizedError();
    return token;
  }

  if (policy.session !== false && resolvers.session) {
    const session = await resolvers.session(request);
    // A cookie on an unsafe method counts only with a valid CSRF token (reference §1.6).
    if (session && (SAFE_METHODS.has(request.method) || resolvers.csrfTokenValid?.(request, session.id))) {
      return { actor: { user: session.user, credential: { kind: 'session', id: session.id, scopes: null } }, token: null };
    }
  }
  return null;
}

/** The rotation routes of personal, project and group tokens (reference §1.3). */
const ROTATION_PATH = /^\/api\/v4\/(?:personal_access_tokens|(?:projects|groups)\/[^/?]+\/access_tokens)\/(?:\d+|self)\/rotate(?:\?|$)/;

/**
 * A token refused as revoked (expiry is answered first) on a rotation route is a rotated-out
 * secret used again, by its owner's stale copy or by whoever took it: the family it belongs to
 * is revoked before the request is refused (reference §1.3). Only refusals come here.
 */
async function revokeReplayedFamily(deps: AuthDeps, request: FastifyRequest, token: ResolvedToken): Promise<void> {
  if (ROTATION_PATH.test(request.url)) await deps.resolvers.current.revokedTokenReplayed?.(token.kind, token.id, request.ip);
}

/** The API's answer to a refused token (reference §1.4). */
function apiRefusal(refusal: TokenRefusal): InvalidTokenError | ForbiddenError {
  switch (refusal.reason) {
    case 'expired':
      return InvalidTokenError.expired();
    case 'revoked':
      return InvalidTokenError.revoked();
    case 'impersonation_disabled':
      return InvalidTokenError.impersonationDisabled();
    case 'blocked':
      return blocked();
  }
}

const blocked = () => new ForbiddenError('Your account has been blocked.');

/** Sudo checks in the order of reference §1.8. */
async function applySudo(deps: AuthDeps, actor: Actor | null, token: ResolvedToken | null, value: string): Promise<Actor> {
  if (!actor) throw new UnauthorizedError();
  if (!actor.user.isAdmin) throw new ForbiddenError('Must be admin to use sudo');
  if (!token || !isTokenCredential(actor.credential)) {
    throw new ForbiddenError('Must be authenticated using an OAuth or personal access token to use sudo');
  }
  if (!token.scopes.includes('sudo')) throw new InsufficientScopeError(['sudo']);
  const target = deps.resolvers.current.userByIdOrUsername ? await deps.resolvers.current.userByIdOrUsername(value) : null;
  if (!target) throw new NotFoundMessageError(`404 User with ID or username '${value}' Not Found`);
  // The request acts as the target: a blocked user may not act, whoever asks for it.
  if (target.state === 'blocked') throw blocked();
  return { user: target, credential: actor.credential, sudoer: actor.user };
}

async function enforceApiLimits(deps: AuthDeps, request: FastifyRequest, actor: Actor | null): Promise<void> {
  const limits = deps.config.rateLimits;
  if (actor) await deps.limiter.enforce('api_authenticated', `user:${actor.user.id}`, limits.api_authenticated);
  else await deps.limiter.enforce('api_unauthenticated', `ip:${request.ip}`, limits.api_unauthenticated);
}
