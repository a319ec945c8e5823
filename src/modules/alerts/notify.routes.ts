import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  apiErrorHandler,
} from '../../infra/errors/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { AlertsDeps } from './alerts.deps.js';
import { PAYLOAD_LIMIT_BYTES, PAYLOAD_MAX_DEPTH } from './alerts.schemas.js';
import { DEPTH_MESSAGE } from './ingest.service.js';
import type { IntegrationRow } from './integrations.repository.js';
import { depthChecked, isObject, jsonDepth, receivedText } from './normalize.common.js';
import type { AlertSettings } from './targets.js';

/** Project paths of 2 to 21 segments: a personal namespace or up to 20 nested groups. */
export const MAX_PROJECT_SEGMENTS = 21;

declare module 'fastify' {
  interface FastifyRequest {
    alertTarget?: { project: ProjectRow; integration: IntegrationRow; settings: AlertSettings };
  }
}

/** The key from `Authorization: Bearer`, or the password of Basic (any user name; URL credentials arrive so). */
export function alertKey(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^\s*(bearer|basic)\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1] || !match[2]) return null;
  if (match[1].toLowerCase() === 'bearer') return match[2];
  const decoded = Buffer.from(match[2], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : null;
}

/**
 * JSON.parse that drops `__proto__` keys. A reviver slows parsing several times over, so
 * it only runs when the text could hold that key (the approach of secure-json-parse).
 */
export function parseJsonWithoutProto(text: string): unknown {
  // `\u` escapes could spell the key without the plain text: those take the slow path too.
  if (!text.includes('__proto__') && !text.includes('\\u')) {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) receivedText.set(parsed, text);
    return parsed;
  }
  return JSON.parse(text, (key, value: unknown) => (key === '__proto__' ? undefined : value));
}

const SEGMENT_PARAMS = Array.from({ length: MAX_PROJECT_SEGMENTS }, (_, i) => `p${i}`);

function projectPath(params: Record<string, string>, segments: number): string {
  let path = params.p0 ?? '';
  for (let i = 1; i < segments; i += 1) path += `/${params[SEGMENT_PARAMS[i] as string] ?? ''}`;
  return path;
}

/**
 * The alert receiver of SPEC "Alert receiver" at the service root:
 * `/<project>/alerts/notify/<name>/<endpoint_identifier>.json` (HTTP integrations) and
 * `/<project>/prometheus/alerts/notify.json`. One parametric route per path depth keeps
 * every static root route (sign-in, OAuth, `/-/…`) ahead of these in the router.
 * Its own JSON parser bounds the body (1 MiB, depth 100, reference A4) and answers 415 for
 * other content types; the key is checked before the body is read.
 */
export async function notifyRoutes(app: FastifyInstance, deps: AlertsDeps): Promise<void> {
  const { platform, targets, integrations, ingest } = deps;

  const authenticate = (kind: 'http' | 'prometheus', segments: number) => async (request: FastifyRequest) => {
    const params = request.params as Record<string, string>;
    const endpoint = kind === 'http' ? (params.endpoint ?? '').replace(/\.json$/, '') : null;
    const target = await targets.find(projectPath(params, segments), kind, endpoint);
    if (!target) throw new NotFoundError('Project');
    const { project, integration, settings } = target;
    // Reference A3: unknown or inactive integration is 403, then a wrong or missing key is 401.
    if (!integration || integration.active !== 1) throw new ForbiddenError();
    if (!integrations.keyMatches(integration, alertKey(request))) throw new UnauthorizedError();
    await platform.limiter.enforce('alerts', `project:${project.id}`, platform.config.rateLimits.alerts);
    const type = request.headers['content-type'];
    if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) {
      throw new UnsupportedMediaTypeError('415 Unsupported Media Type - alerts must be sent as Content-Type: application/json');
    }
    request.alertTarget = { project, integration, settings };
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const target = request.alertTarget;
    if (!target) throw new NotFoundError('Project');
    const created = await ingest.ingest(target.project, target.integration, request.body, target.settings);
    return reply.code(200).send(created);
  };

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: PAYLOAD_LIMIT_BYTES }, (_request, body, done) => {
      let parsed: unknown;
      try {
        parsed = parseJsonWithoutProto(String(body));
      } catch (error) {
        return done(new BadRequestError(`400 Bad request - Malformed JSON body: ${(error as Error).message}`), undefined);
      }
      if (jsonDepth(parsed, PAYLOAD_MAX_DEPTH) > PAYLOAD_MAX_DEPTH) return done(new BadRequestError(DEPTH_MESSAGE), undefined);
      if (isObject(parsed)) depthChecked.add(parsed);
      done(null, parsed);
    });
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        const tooLarge = new PayloadTooLargeError(`413 Payload Too Large - alert payloads are limited to ${PAYLOAD_LIMIT_BYTES} bytes`);
        return apiErrorHandler(tooLarge, request, reply);
      }
      return apiErrorHandler(error, request, reply);
    });

    const config = { policy: { auth: 'none' as const, session: false } };
    for (let segments = 2; segments <= MAX_PROJECT_SEGMENTS; segments += 1) {
      const project = Array.from({ length: segments }, (_, i) => `:p${i}`).join('/');
      scope.post(
        `/${project}/alerts/notify/:name/:endpoint`,
        { config, onRequest: authenticate('http', segments), bodyLimit: PAYLOAD_LIMIT_BYTES },
        handle,
      );
      scope.post(
        `/${project}/prometheus/alerts/notify.json`,
        { config, onRequest: authenticate('prometheus', segments), bodyLimit: PAYLOAD_LIMIT_BYTES },
        handle,
      );
    }
  });
}
