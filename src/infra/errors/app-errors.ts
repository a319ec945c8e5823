/**
 * Typed errors thrown by services and routes. Each carries its status and the body the
 * spec prescribes; the handlers of handlers.ts turn them into responses (`apiErrorHandler`
 * for `/api/v4` and the pages, `oauthErrorHandler` for `/oauth`), and the git routes answer
 * them as text (modules/git). Codes and the three dialects are in docs/errors.md.
 */
export type ValidationMessages = { [field: string]: string[] | ValidationMessages };

export abstract class AppError extends Error {
  abstract readonly status: number;
  /** Stable snake_case identifier (docs/errors.md). */
  abstract readonly code: string;
  readonly headers: Record<string, string> = {};
  abstract body(): unknown;
}

/** The common case: the body is `{"message": <the error's message>}` (SPEC "Errors" rule 1). */
export abstract class MessageError extends AppError {
  body(): unknown {
    return { message: this.message };
  }
}

/**
 * 400 for a missing required attribute: `message` is a string naming it (SPEC "Errors" rule 1).
 * `alternatives`: none of several attributes was given, any one of which would do (Grape's
 * `at_least_one_of`), and the message says so.
 */
export class MissingAttributeError extends MessageError {
  readonly status = 400;
  readonly code = 'missing_attribute';
  constructor(
    readonly attributes: readonly string[],
    alternatives = false,
  ) {
    super(
      `${attributes.join(', ')} ${attributes.length > 1 ? 'are' : 'is'} missing${alternatives ? ', at least one parameter must be provided' : ''}`,
    );
  }
}

/** 400 with a plain message (bad parameter value, malformed body). */
export class BadRequestError extends MessageError {
  readonly status = 400;
  readonly code = 'bad_request';
}

/** 400 with `message` an object of arrays (SPEC "Errors" rule 2). */
export class ValidationError extends AppError {
  readonly status = 400;
  readonly code = 'validation_failed';
  constructor(readonly messages: ValidationMessages) {
    super('validation failed');
  }
  body() {
    return { message: this.messages };
  }
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

export class UnauthorizedError extends MessageError {
  readonly status = 401;
  readonly code = 'unauthorized';
  constructor(readonly reason?: string) {
    super(reason ? `401 Unauthorized - ${reason}` : '401 Unauthorized');
  }
}

/** RFC 6750 `invalid_token`: expired, revoked or impersonation-disabled tokens. */
export class InvalidTokenError extends AppError {
  readonly status = 401;
  readonly code = 'invalid_token';
  constructor(
    readonly description: string,
    /** Which check refused the token, for callers that act on one of them. */
    readonly reason: 'expired' | 'revoked' | 'impersonation_disabled',
  ) {
    super(description);
    this.headers['www-authenticate'] = `Bearer realm="Protected by OAuth 2.0", error="invalid_token", error_description="${description}"`;
  }
  body() {
    return { error: 'invalid_token', error_description: this.description };
  }
  static expired() {
    return new InvalidTokenError('Token is expired. You can either do re-authorization or token refresh.', 'expired');
  }
  static revoked() {
    return new InvalidTokenError('Token was revoked. You have to re-authorize from the user.', 'revoked');
  }
  static impersonationDisabled() {
    return new InvalidTokenError('Token is an impersonation token but impersonation was disabled.', 'impersonation_disabled');
  }
}

export class InsufficientScopeError extends AppError {
  readonly status = 403;
  readonly code = 'insufficient_scope';
  constructor(readonly scopes: readonly string[]) {
    super('The request requires higher privileges than provided by the access token.');
  }
  body() {
    return { error: 'insufficient_scope', error_description: this.message, scope: this.scopes.join(' ') };
  }
}

export class ForbiddenError extends MessageError {
  readonly status = 403;
  readonly code = 'forbidden';
  constructor(readonly reason?: string) {
    super(reason ? `403 Forbidden - ${reason}` : '403 Forbidden');
  }
}

/** 404 `{"message":"404 <Thing> Not Found"}`; what the caller may not see is also a 404. */
export class NotFoundError extends MessageError {
  readonly status = 404;
  readonly code = 'not_found';
  constructor(readonly thing?: string) {
    super(thing ? `404 ${thing} Not Found` : '404 Not Found');
  }
}

/** 404 with a message given whole (Sudo's unknown user). */
export class NotFoundMessageError extends MessageError {
  readonly status = 404;
  readonly code = 'not_found';
}

export class MethodNotAllowedError extends MessageError {
  readonly status = 405;
  readonly code = 'method_not_allowed';
  constructor(allow: readonly string[], message = '405 Method Not Allowed') {
    super(message);
    this.headers.allow = allow.join(', ');
  }
}

export class ConflictError extends MessageError {
  readonly status = 409;
  readonly code = 'conflict';
  constructor(message = '409 Conflict') {
    super(message);
  }
}

export class PreconditionFailedError extends MessageError {
  readonly status = 412;
  readonly code = 'precondition_failed';
  constructor() {
    super('412 Precondition Failed');
  }
}

export class PayloadTooLargeError extends MessageError {
  readonly status = 413;
  readonly code = 'payload_too_large';
  constructor(message = '413 Request Entity Too Large') {
    super(message);
  }
}

export class UnsupportedMediaTypeError extends MessageError {
  readonly status = 415;
  readonly code = 'unsupported_media_type';
  constructor(message = '415 Unsupported Media Type') {
    super(message);
  }
}

export class UnprocessableError extends MessageError {
  readonly status = 422;
  readonly code = 'unprocessable';
  constructor(message = '422 Unprocessable Entity') {
    super(message);
  }
}

/** 429 with `Retry-After` and the `RateLimit-*` headers set by the limiter. */
export class TooManyRequestsError extends AppError {
  readonly status = 429;
  readonly code = 'rate_limited';
  constructor(
    retryAfterSeconds: number,
    headers: Record<string, string> = {},
    message = 'This endpoint has been requested too many times. Try again later.',
  ) {
    super(message);
    Object.assign(this.headers, headers, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
  body() {
    return { message: { error: this.message } };
  }
}

/** 503 when the server sheds load; clients retry after the given delay. */
export class ServiceUnavailableError extends MessageError {
  readonly status = 503;
  readonly code = 'service_unavailable';
  constructor(retryAfterSeconds = 5, message = '503 Service Unavailable') {
    super(message);
    this.headers['retry-after'] = String(retryAfterSeconds);
  }
}

/** A body chosen whole by a module (spam checks, collector errors), with its status. */
export class CustomBodyError extends AppError {
  readonly code: string;
  constructor(
    readonly status: number,
    private readonly payload: unknown,
    code = 'custom',
    headers: Record<string, string> = {},
  ) {
    super(code);
    this.code = code;
    Object.assign(this.headers, headers);
  }
  body() {
    return this.payload;
  }
}

/** A renamed project or group: GET by its old path answers 301 with the new location. */
export class MovedPermanentlyError extends MessageError {
  readonly status = 301;
  readonly code = 'moved_permanently';
  constructor(location: string) {
    super(`This resource has been moved permanently to ${location}`);
    this.headers.location = location;
  }
}
