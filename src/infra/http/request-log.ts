import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';

/** Query parameters that may carry a secret; their values never reach the log. */
const SECRET_PARAMS =
  /([?&](?:private_token|access_token|job_token|sentry_key|token|code|refresh_token|client_secret|code_verifier|device_code|password|key)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[FILTERED]');
}

/** Headers removed from every logged object (pino redaction paths). */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers["private-token"]',
  'req.headers["job-token"]',
  'req.headers.cookie',
  'req.headers["x-sentry-auth"]',
  'req.headers["x-csrf-token"]',
  'headers.authorization',
  'headers["private-token"]',
  'headers["job-token"]',
  'headers.cookie',
];

/** One line per request, with its id, route, status, time and caller. */
export function logRequest(log: FastifyBaseLogger, request: FastifyRequest, reply: FastifyReply): void {
  // Written through the server's logger with the id in the line: `request.log` stays lazy
  // (infra/http/lazy-logger.ts).
  log.info(
    {
      request_id: request.id,
      method: request.method,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
      user: request.actor?.user.id,
      ip: request.ip,
    },
    'request',
  );
}
