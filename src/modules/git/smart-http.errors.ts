import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../infra/errors/index.js';

export const READ_ONLY_MESSAGE = 'The repository is temporarily read-only. Please try again later.';
const BUSY_RETRY_SECONDS = 5;
const NOT_FOUND_MESSAGE = "The project you were looking for could not be found or you don't have permission to view it.";

/**
 * Errors of the git smart-HTTP endpoints. Git prints a `text/plain` error body to the user
 * (prefixed `remote:`), so these answer plain text rather than the API's JSON; a 401
 * carries `WWW-Authenticate: Basic`, which is what makes git ask for (or send) credentials.
 */
export class GitHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  static unauthorized(reason = 'HTTP Basic: Access denied.'): GitHttpError {
    return new GitHttpError(
      401,
      `${reason}\nUse a token with the read_repository or write_repository scope as password (any username), or your password.`,
      { 'www-authenticate': 'Basic realm="Basalt"' },
    );
  }

  static forbidden(message = 'You are not allowed to access this repository.'): GitHttpError {
    return new GitHttpError(403, message);
  }

  static notFound(): GitHttpError {
    return new GitHttpError(404, NOT_FOUND_MESSAGE);
  }

  static readOnly(): GitHttpError {
    return new GitHttpError(403, READ_ONLY_MESSAGE);
  }

  /**
   * Too many `git http-backend` processes at once, from this address or in all: come back
   * when one has ended. A concurrency cap has no window, so Retry-After is a short guess.
   */
  static busy(scope: 'address' | 'total', limit: number): GitHttpError {
    const name = scope === 'address' ? 'git_concurrency_per_ip' : 'git_concurrency';
    const message =
      scope === 'address'
        ? `Too many git operations in progress from your address (at most ${limit} at once). Try again shortly.`
        : 'Too many git operations in progress on this server. Try again shortly.';
    return new GitHttpError(429, message, {
      'retry-after': String(BUSY_RETRY_SECONDS),
      'ratelimit-name': name,
      'ratelimit-limit': String(limit),
      'ratelimit-observed': String(limit),
      'ratelimit-remaining': '0',
    });
  }

  /** With the limiter's headers: Retry-After (the window's end) and RateLimit-* (DESIGN §5). */
  static tooManyAttempts(headers: Record<string, string>): GitHttpError {
    return new GitHttpError(429, 'Too many failed sign-in attempts. Try again later.', headers);
  }
}

/** The error handler of the git routes' scope: plain text for git, never a stack trace. */
export function gitErrorHandler(error: FastifyError | GitHttpError | AppError, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof GitHttpError) {
    void reply.code(error.status).headers(error.headers).type('text/plain; charset=utf-8').send(`${error.message}\n`);
    return;
  }
  if (error instanceof AppError) {
    // Platform errors (overload 503, rate limits) keep their status and headers, as text.
    void reply.code(error.status).headers(error.headers).type('text/plain; charset=utf-8').send(`${error.message}\n`);
    return;
  }
  request.log.error({ err: error }, 'git smart HTTP request failed');
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  void reply
    .code(status)
    .type('text/plain; charset=utf-8')
    .send(status === 500 ? 'Internal server error\n' : 'Bad request\n');
}
