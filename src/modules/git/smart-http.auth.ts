import type { FastifyRequest } from 'fastify';
import { authenticateToken, basicCredentials, TokenRefusal, type Actor, type TokenActor } from '../../infra/auth/index.js';
import type { Platform } from '../../infra/platform.js';
import { toActorUser, type UsersService } from '../identity/index.js';
import { GitHttpError } from './smart-http.errors.js';

const JOB_USERNAME = 'gitlab-ci-token';
const SIGN_IN_LIMIT = 'sign_in';
const MAX_CREDENTIAL_LENGTH = 1024;

/** Scopes that let a token read or write repositories (SPEC "Git over HTTPS"; `api` covers both). */
export const READ_SCOPES = ['api', 'read_repository', 'write_repository'];
export const WRITE_SCOPES = ['api', 'write_repository'];

export interface GitActor {
  actor: Actor;
  /** The username git sent (for REMOTE_USER and logs). */
  login: string;
}

/**
 * Git sends Basic credentials with any username and, as password, a token (personal,
 * project, group, impersonation or OAuth), a CI job token (username `gitlab-ci-token`) or
 * the user's own password. Nothing sent: `null` (anonymous). Something wrong: 401.
 */
export class GitAuthenticator {
  constructor(
    private readonly platform: Platform,
    private readonly users: UsersService,
  ) {}

  async authenticate(request: FastifyRequest): Promise<GitActor | null> {
    const header = request.headers.authorization;
    if (!header) return null;
    if (header.length > MAX_CREDENTIAL_LENGTH * 2) throw GitHttpError.unauthorized();
    const credentials = basicCredentials(request);
    if (!credentials) throw GitHttpError.unauthorized();
    const { username: login, password } = credentials;
    if (password === '' || password.length > MAX_CREDENTIAL_LENGTH || login.length > 255) throw GitHttpError.unauthorized();
    const resolvers = this.platform.resolvers.current;

    if (login === JOB_USERNAME && resolvers.jobToken) {
      const job = await resolvers.jobToken(password);
      if (!job?.running) throw GitHttpError.unauthorized();
      // A job runs as its user, so a blocked user's jobs lose git access too (as on the API).
      refuseBlocked(job.user);
      return {
        login,
        actor: { user: job.user, credential: { kind: 'job_token', id: job.id, scopes: null, projectId: job.projectId }, ip: request.ip },
      };
    }

    const found = await this.tokenActor(password);
    if (found) {
      resolvers.tokenUsed?.(found.token.kind, found.token.id);
      return { login, actor: { ...found.actor, ip: request.ip } };
    }
    return { login, actor: await this.passwordActor(request, login, password) };
  }

  /** The API's validator (infra/auth), its refusals in git's words. */
  private async tokenActor(secret: string): Promise<TokenActor | null> {
    try {
      return await authenticateToken(this.platform, secret, 'any');
    } catch (error) {
      if (!(error instanceof TokenRefusal)) throw error;
      switch (error.reason) {
        case 'expired':
          throw GitHttpError.unauthorized('Your token has expired.');
        case 'revoked':
          throw GitHttpError.unauthorized('Your token has been revoked.');
        case 'impersonation_disabled':
          throw GitHttpError.unauthorized();
        case 'blocked':
          throw GitHttpError.forbidden(BLOCKED);
      }
    }
  }

  /**
   * A password is checked like a sign-in: failures count against the `sign_in` limit, taken
   * before the check and given back on success so concurrent guesses cannot all get through,
   * and each failure is a failed sign-in in the audit trail (`via: git_http`, with the address).
   */
  private async passwordActor(request: FastifyRequest, login: string, password: string): Promise<Actor> {
    const { limiter, config } = this.platform;
    const keys = [`ip:${request.ip}`, `login:${login.trim().toLowerCase()}`];
    const reservation = await limiter.reserve(SIGN_IN_LIMIT, keys, config.rateLimits.sign_in);
    if (!reservation.allowed) throw GitHttpError.tooManyAttempts(reservation.error.headers);
    const user = login ? await this.users.authenticate(login, password) : null;
    // A failure keeps the counts the reservation took.
    if (!user || user.bot === 1) {
      await this.users.recordFailedSignIn(login.trim(), user, request.ip, 'git_http');
      throw GitHttpError.unauthorized();
    }
    await reservation.release();
    refuseBlocked(user);
    // A password is not scoped: it carries all of the user's rights, like a web session.
    return { user: toActorUser(user), credential: { kind: 'session', id: 0, scopes: null }, ip: request.ip };
  }
}

const BLOCKED = 'Your account has been blocked.';

/** Every credential of a blocked user is refused with 403, like the API's auth hook does. */
function refuseBlocked(user: { state: string }): void {
  if (user.state === 'blocked') throw GitHttpError.forbidden(BLOCKED);
}

/** Whether the credential's scopes allow this git operation (sessions and job tokens are unscoped). */
export function scopesAllow(actor: Actor, write: boolean): boolean {
  const scopes = actor.credential.scopes;
  if (scopes === null) return !(write && actor.credential.kind === 'job_token');
  return scopes.some((s) => (write ? WRITE_SCOPES : READ_SCOPES).includes(s));
}
