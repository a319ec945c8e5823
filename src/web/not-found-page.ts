import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppError } from '../infra/errors/index.js';
import { renderErrorPage } from './page-errors.js';
import type { PagePorts } from './page-policy.js';

/** Machine addresses keep their own 404 (JSON, OAuth's, git's); people get the page. */
const MACHINE_PREFIXES = ['/api/', '/oauth/', '/.well-known/', '/-/static/', '/-/metrics', '/-/health', '/-/readiness', '/-/liveness'];

/**
 * The 404 (or 405) for an address no route answers in this method, as a page in the layout when
 * a browser asks for one (a GET that accepts HTML outside the machine addresses); null lets the
 * API's answer stand.
 */
export function notFoundPage(ports: Pick<PagePorts, 'currentUser' | 'csrfToken'>) {
  return async (request: FastifyRequest, reply: FastifyReply, error: AppError): Promise<FastifyReply | null> => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    if (!(request.headers.accept ?? '').includes('text/html')) return null;
    const path = request.originalUrl;
    if (MACHINE_PREFIXES.some((prefix) => path.startsWith(prefix))) return null;
    const actor = await ports.currentUser(request);
    request.page = { actor, csrf: actor ? ports.csrfToken(request, reply) : '', project: null, group: null, flash: null };
    reply.headers(error.headers);
    return renderErrorPage(request, reply, error.status);
  };
}
