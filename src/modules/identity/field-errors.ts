import type { ValidationError } from '../../infra/errors/index.js';
import type { FieldErrors } from '../../web/index.js';

/**
 * A service's refusal (`{field: ['is invalid', ..]}`) as a form shows it: one message beside
 * each field, the sentence the API would give (nested entities are named by their field).
 */
export function fieldErrorsOf(error: ValidationError): FieldErrors {
  return Object.fromEntries(
    Object.entries(error.messages).map(([field, messages]) => [field, Array.isArray(messages) ? messages.join(', ') : 'is invalid']),
  );
}
