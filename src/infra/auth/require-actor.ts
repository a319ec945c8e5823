import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors/index.js';
import type { Actor } from './actor.js';

/**
 * The caller of a route that needs one. The auth hook already refuses anonymous callers of
 * `auth: 'required'` routes; this narrows the type and answers 401 should a route's policy
 * ever let one through.
 */
export function requireActor(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthorizedError();
  return request.actor;
}
