import type { FastifyRequest } from 'fastify';
import { PreconditionFailedError } from '../errors/index.js';

/**
 * DELETE with `If-Unmodified-Since`: 412 when the resource changed after that time
 * (reference §3.2). Unparsable dates are ignored; the header has whole seconds only.
 */
export function checkUnmodifiedSince(request: FastifyRequest, updatedAtMs: number): void {
  const value = request.headers['if-unmodified-since'];
  if (typeof value !== 'string') return;
  const since = Date.parse(value);
  if (Number.isNaN(since)) return;
  if (Math.floor(updatedAtMs / 1000) * 1000 > since) throw new PreconditionFailedError();
}
