import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './app-errors.js';
import { fromFastifyError } from './fastify-errors.js';
import { OAuthError, TemporarilyUnavailableError } from './oauth-errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route's own message for a body over its `bodyLimit` (the alert receiver names its limit). */
    bodyTooLargeMessage?: string;
  }
}

function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(error.body());
}

function sendInternal(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  request.log.error({ err: error }, 'unhandled error');
  return reply.code(500).type('application/json; charset=utf-8').send({ message: '500 Internal Server Error' });
}

/** The `/api/v4` (and default) formatter: `{message}` bodies of SPEC "Errors". */
export function apiErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof OAuthError) return sendOAuthError(reply, error);
  const appError = fromFastifyError(error, request.routeOptions.config.bodyTooLargeMessage);
  if (appError) {
    if (appError.status >= 500) request.log.warn({ err: error }, 'request failed');
    return sendAppError(reply, appError);
  }
  return sendInternal(request, reply, error);
}

function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  // RFC 6749 §5.1: token responses and their errors must not be cached.
  return reply
    .code(error.status)
    .headers({ 'cache-control': 'no-store', pragma: 'no-cache', ...error.headers })
    .type('application/json; charset=utf-8')
    .send(error.body());
}

/** The `/oauth` formatter: RFC 6749 `{error, error_description}` bodies. */
export function oauthErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof OAuthError) return sendOAuthError(reply, error);
  if (error instanceof AppError && error.status === 429) return sendAppError(reply, error);
  // Load shedding (app.ts) rejects before any route: an overload, not a failure of the server.
  if (error instanceof AppError && error.status === 503)
    return sendOAuthError(reply, new TemporarilyUnavailableError(error.headers['retry-after']));
  const appError = fromFastifyError(error);
  if (appError && appError.status < 500) {
    const status = appError.status === 413 ? 413 : 400;
    const description =
      typeof appError.body() === 'object'
        ? JSON.stringify((appError.body() as { message?: unknown }).message ?? appError.message)
        : appError.message;
    return sendOAuthError(reply, new OAuthError('invalid_request', description.replace(/^"|"$/g, ''), status));
  }
  return sendInternal(request, reply, error);
}
