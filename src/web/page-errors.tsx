import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ValidationError } from '../infra/errors/index.js';
import { Flash, Layout, sendPage } from './layout.js';
import type { FieldErrors } from './page-policy.js';
import { ROLE_NAMES } from './project-nav.js';
import { toSignIn } from './sign-in-path.js';

/** 403 from a page policy: the page names the role it needs. */
export class RoleRequiredError extends AppError {
  readonly status = 403;
  readonly code = 'role_required';
  constructor(readonly role: string) {
    super(`You need the ${role} role or higher to open this page.`);
  }
  body() {
    return { message: this.message };
  }
  static forLevel(level: number): RoleRequiredError {
    return new RoleRequiredError(ROLE_NAMES[level] ?? 'Guest');
  }
}

/** 403 for administrators' pages. */
export class AdminRequiredError extends AppError {
  readonly status = 403;
  readonly code = 'admin_required';
  constructor() {
    super('Only administrators can open this page.');
  }
  body() {
    return { message: this.message };
  }
}

const TITLES: Record<number, string> = {
  400: 'Something in the request is not right',
  403: 'You are not allowed to see this',
  404: 'Page not found',
  405: 'Not allowed here',
  409: 'That conflicts with what is there',
  413: 'That is too large',
  415: 'Unsupported content',
  422: 'That could not be saved',
  429: 'Too many requests',
  500: 'Something went wrong on our side',
  503: 'Basalt is busy',
};

const DEFAULT_TEXT: Record<number, string> = {
  404: 'The page does not exist, or you are not allowed to see it. If you think it should be here, sign in or ask an owner for access.',
  405: 'This address is not opened that way. Follow a link or a button to it instead.',
  500: 'The error has been logged. Try again in a moment; if it keeps happening, tell your administrator.',
};

/** A message from an API error body (`{message: string}` or `{message: {field: [..]}}`). */
function messageOf(error: AppError): string {
  const body = error.body() as { message?: unknown; error_description?: unknown };
  if (typeof body.message === 'string') return body.message.replace(/^\d{3} /, '');
  if (typeof body.error_description === 'string') return body.error_description;
  if (body.message && typeof body.message === 'object')
    return Object.entries(body.message as Record<string, unknown>)
      .map(([field, value]) => `${field} ${Array.isArray(value) ? value.join(', ') : String(value)}`)
      .join('; ');
  return error.message;
}

export function renderErrorPage(request: FastifyRequest, reply: FastifyReply, status: number, text?: string): FastifyReply {
  const title = TITLES[status] ?? (status >= 500 ? TITLES[500]! : TITLES[400]!);
  const page = request.page ?? null;
  return sendPage(
    reply,
    <Layout title={title} page={page}>
      <h1>{title}</h1>
      <Flash kind="error">
        {text ?? DEFAULT_TEXT[status] ?? (status >= 500 ? DEFAULT_TEXT[500] : 'The request could not be answered.')}
      </Flash>
      <p>
        <a href="/">Go to your dashboard</a>
      </p>
    </Layout>,
    status,
  );
}

/** Field messages from Fastify's schema validation errors, by the body's property names. */
export function fieldErrors(
  validation: readonly { instancePath?: string; keyword?: string; params?: Record<string, unknown>; message?: string }[],
): FieldErrors {
  const out: Record<string, string> = {};
  for (const issue of validation) {
    const missing = issue.params?.missingProperty;
    const field =
      issue.keyword === 'required' && typeof missing === 'string'
        ? missing
        : (issue.instancePath ?? '').replace(/^\//, '').split('/')[0] || '_';
    if (out[field]) continue;
    out[field] =
      issue.keyword === 'required'
        ? 'is required'
        : issue.keyword === 'maxLength'
          ? `is too long (at most ${String(issue.params?.limit)} characters)`
          : issue.keyword === 'minLength'
            ? issue.params?.limit === 1
              ? 'cannot be empty'
              : `is too short (at least ${String(issue.params?.limit)} characters)`
            : (issue.message ?? 'is not valid');
  }
  return out;
}

interface FastifyValidationFailure {
  validation?: { instancePath?: string; keyword?: string; params?: Record<string, unknown>; message?: string }[];
  validationContext?: string;
  statusCode?: number;
}

/**
 * The page layer's one error handler: every refusal is a page in the layout, never JSON.
 * Not signed in goes to the sign-in page and back; a moved project follows its redirect; a
 * form that fails its schema is drawn again with each field's message.
 */
export function pageErrorHandler() {
  return async (error: unknown, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const failure = error as FastifyValidationFailure;
    if (failure.validation) {
      const form = request.routeOptions.config.page?.form;
      if (form && failure.validationContext === 'body' && request.page) {
        const input = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
        return sendPage(reply, await form(request, input, fieldErrors(failure.validation)), 400);
      }
      const fields = fieldErrors(failure.validation);
      return renderErrorPage(
        request,
        reply,
        400,
        `The ${failure.validationContext === 'body' ? 'form' : 'address'} has a value that is not valid: ${Object.entries(fields)
          .map(([field, message]) => `${field} ${message}`)
          .join('; ')}.`,
      );
    }
    if (error instanceof AppError) {
      if (error.status === 301 && error.headers.location) return reply.redirect(error.headers.location, 301);
      if (error.status === 401) return toSignIn(request, reply);
      reply.headers(error.headers);
      if (error.status === 404) return renderErrorPage(request, reply, 404);
      return renderErrorPage(request, reply, error.status, messageOf(error));
    }
    const status = failure.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500)
      return renderErrorPage(request, reply, status, (error as Error).message);
    request.log.error({ err: error }, 'page failed');
    return renderErrorPage(request, reply, 500);
  };
}

/**
 * A service's refusal as the messages of a form: a ValidationError's by field (`{email: ['is
 * invalid']}`), any other 4xx as the form's own (`_`); anything else is not a form's business.
 */
export function formErrorsOf(error: unknown): FieldErrors | null {
  if (!(error instanceof AppError) || error.status >= 500 || error.status === 401) return null;
  if (error instanceof ValidationError) return fieldErrorsOf(error);
  return { _: messageOf(error) };
}

/** A ValidationError's messages (`{field: ['is invalid', ..]}`) as a form shows them: one line beside each field. */
export function fieldErrorsOf(error: ValidationError): FieldErrors {
  return Object.fromEntries(
    Object.entries(error.messages).map(([field, messages]) => [field, Array.isArray(messages) ? messages.join(', ') : 'is invalid']),
  );
}
