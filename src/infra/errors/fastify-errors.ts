import type { FastifyError } from 'fastify';
import {
  AppError,
  BadRequestError,
  CustomBodyError,
  MethodNotAllowedError,
  MissingAttributeError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
  ValidationError,
  type ValidationMessages,
} from './app-errors.js';

interface AjvIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

function fieldName(issue: AjvIssue): string {
  const parts = issue.instancePath.split('/').filter(Boolean);
  return parts.length > 0 ? parts.join('.') : 'body';
}

function describe(issue: AjvIssue): string {
  switch (issue.keyword) {
    case 'maxLength':
      return `is too long (maximum is ${String(issue.params.limit)} characters)`;
    case 'minLength':
      return Number(issue.params.limit) <= 1 ? "can't be blank" : `is too short (minimum is ${String(issue.params.limit)} characters)`;
    case 'enum':
    case 'anyOf':
    case 'const':
      return 'does not have a valid value';
    case 'maximum':
      return `must be less than or equal to ${String(issue.params.limit)}`;
    case 'minimum':
      return `must be greater than or equal to ${String(issue.params.limit)}`;
    case 'maxItems':
      return `is too long (maximum is ${String(issue.params.limit)} items)`;
    case 'format':
      return 'is invalid';
    default:
      return 'is invalid';
  }
}

/**
 * Fields named in one validation answer at most. ajv reports every error (`allErrors`), so an
 * array of a million wrong items yields a million issues after `maxItems` already failed: the
 * answer names the first fields (the container's own `maxItems` among them) and stops there.
 */
const MAX_FIELDS = 50;

/** ajv's errors as the spec's bodies: a missing attribute names it, the rest are a validation object. */
function fromValidation(issues: readonly AjvIssue[]): AppError {
  const missing = new Set<string>();
  for (const issue of issues) if (issue.keyword === 'required') missing.add(String(issue.params.missingProperty));
  if (missing.size > 0) return new MissingAttributeError([...missing].slice(0, MAX_FIELDS));
  // anyOf reports each failed branch too; keep the summary only. One pass each: the issues
  // come from the request, so nothing here may be quadratic in their number.
  const summarised = new Set<string>();
  for (const issue of issues) if (issue.keyword === 'anyOf') summarised.add(issue.instancePath);
  const messages: ValidationMessages = {};
  let fields = 0;
  // A container's own issue (`maxItems` of `/scopes`) sorts before its items' (`/scopes/0`).
  const ordered = issues.length > MAX_FIELDS ? [...issues].sort((a, b) => a.instancePath.length - b.instancePath.length) : issues;
  for (const issue of ordered) {
    if (issue.keyword !== 'anyOf' && summarised.has(issue.instancePath)) continue;
    const name = fieldName(issue);
    let list = messages[name] as string[] | undefined;
    if (!list) {
      if (fields === MAX_FIELDS) continue;
      fields += 1;
      list = messages[name] = [];
    }
    const text = describe(issue);
    if (!list.includes(text)) list.push(text);
  }
  return new ValidationError(messages);
}

/**
 * Turns Fastify's own errors (schema, body parsing, limits) into AppErrors; null if it is not one.
 * `tooLargeMessage`: the route's own 413 message (its `bodyTooLargeMessage` config).
 */
export function fromFastifyError(error: FastifyError, tooLargeMessage?: string): AppError | null {
  if (error instanceof AppError) return error;
  if (Array.isArray(error.validation)) return fromValidation(error.validation);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new BadRequestError(`400 Bad request - Malformed JSON body: ${error.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError(tooLargeMessage);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaTypeError();
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return new BadRequestError(`400 Bad request - ${error.message}`);
    case 'FST_ERR_NOT_FOUND':
      return null;
    default:
      break;
  }
  if (error instanceof SyntaxError) return new BadRequestError(`400 Bad request - Malformed JSON body: ${error.message}`);
  const status = error.statusCode ?? 500;
  if (status === 405) return new MethodNotAllowedError([]);
  if (status >= 400 && status < 500) return new CustomBodyError(status, { message: `${status} ${error.message}` }, 'http_error');
  return null;
}
