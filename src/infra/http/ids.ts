import { Type } from '@sinclair/typebox';

/**
 * `:id` of a project or group: a numeric ID or the URL-encoded full path
 * (`group%2Fsub%2Fproject`). Repeated or empty values are rejected by the schema.
 */
export const NamespaceOrProjectId = Type.String({ minLength: 1, maxLength: 1024 });

/** Integer path parameters: non-numeric input fails validation with 400 (SPEC "Errors" rule 3). */
export const IntegerId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
