import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError, UnsupportedMediaTypeError } from '../../infra/errors/index.js';
import { enforceIngestionLimits, ingestionLimits } from '../../infra/http/index.js';
import type { ProjectRow } from '../projects/index.js';
import type { AlertsDeps } from './alerts.deps.js';
import { jsonTextTooDeep } from '../../infra/json-depth.js';
import { ingestResult } from '../../infra/domain-metrics.js';
import { AlertSummaries, PAYLOAD_LIMIT_BYTES, PAYLOAD_MAX_DEPTH } from './alerts.schemas.js';
import { DEPTH_MESSAGE } from './ingest.service.js';
import type { IntegrationRow, IntegrationType } from './integrations.repository.js';
import type { AlertSettings } from './targets.service.js';

/** Project paths of 2 to 21 segments: a personal namespace or up to 20 nested groups. */
export const MAX_PROJECT_SEGMENTS = 21;

declare module 'fastify' {
  interface FastifyRequest {
    alertTarget?: { project: ProjectRow; integration: IntegrationRow; settings: AlertSettings };
    /** The body's text when it parsed without dropping a key: stored as received. */
    alertBodyText?: string;
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

/** Whether JSON text could hold a `__proto__` key (`\u` escapes could spell it without the plain text). */
const mayHoldProto = (text: string): boolean => text.includes('__proto__') || text.includes('\\u');

/**
 * JSON.parse that drops `__proto__` keys. A reviver slows parsing several times over, so
 * it only runs when the text could hold that key (the approach of secure-json-parse).
 */
export function parseJsonWithoutProto(text: string): unknown {
  if (!mayHoldProto(text)) return JSON.parse(text);
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
 * `/<project>/alerts/notify/<name>/<endpoint_identifier>(.json)` (HTTP integrations) and
 * `/<project>/prometheus/alerts/notify(.json)`. One parametric route per path depth keeps
 * every static root route (sign-in, OAuth, `/-/…`) ahead of these in the router.
 * Its own JSON parser bounds the body (1 MiB; the depth of 100, reference A4, is checked
 * when the payload is normalised) and answers 415 for other content types; the key is
 * checked before the body is read.
 */
export async function notifyRoutes(app: FastifyInstance, deps: AlertsDeps): Promise<void> {
  const { platform, targets, integrations, ingest } = deps;
  const limits = ingestionLimits(platform.config.rateLimits, 'alerts');

  const authenticate = (kind: IntegrationType, segments: number) => async (request: FastifyRequest) => {
    const params = request.params as Record<string, string>;
    const endpoint = kind === 'http' ? (params.endpoint ?? '').replace(/\.json$/, '') : null;
    const target = await targets.find(projectPath(params, segments), kind, endpoint);
    // A project that does not exist or that an anonymous caller could not see answers every
    // refusal as a wrong key does, so that the receiver cannot tell whether it exists (issue 18
    // item 5). A public project keeps reference A3's order: unknown or inactive integration
    // 403, then a wrong or missing key 401.
    const integration = target?.integration?.active === 1 ? target.integration : undefined;
    if (!target || !integration) throw target?.project.visibility === 'public' ? new ForbiddenError() : new UnauthorizedError();
    const { project, settings } = target;
    if (!integrations.keyMatches(integration, alertKey(request))) throw new UnauthorizedError();
    await enforceIngestionLimits(platform.limiter, 'alerts', limits, { address: request.ip, credential: integration.id }, project.id);
    const type = request.headers['content-type'];
    if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) {
      throw new UnsupportedMediaTypeError('415 Unsupported Media Type - alerts must be sent as Content-Type: application/json');
    }
    request.alertTarget = { project, integration, settings };
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const target = request.alertTarget;
    if (!target) throw new NotFoundError('Project');
    const created = await ingest.ingest(target.project, target.integration, request.body, {
      settings: target.settings,
      text: request.alertBodyText,
    });
    return reply.code(200).send(created);
  };

  await app.register(async (scope) => {
    // Scoped to the receiver's routes: every answer counts under its result on `/-/metrics`.
    scope.addHook('onResponse', async (_request, reply) => {
      platform.metrics.increment('basalt_alerts_received_total', { result: ingestResult(reply.statusCode) });
    });
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: PAYLOAD_LIMIT_BYTES }, (request, body, done) => {
      const text = String(body);
      // Refused before JSON.parse builds every level (issue 18); parsed payloads are checked again.
      if (jsonTextTooDeep(text, PAYLOAD_MAX_DEPTH)) return done(new BadRequestError(DEPTH_MESSAGE), undefined);
      let parsed: unknown;
      try {
        parsed = parseJsonWithoutProto(text);
      } catch (error) {
        return done(new BadRequestError(`400 Bad request - Malformed JSON body: ${(error as Error).message}`), undefined);
      }
      // The depth limit is checked once, when the payload is normalised (ingest.service.ts).
      if (!mayHoldProto(text)) request.alertBodyText = text;
      done(null, parsed);
    });

    // The API's error handler answers; only its 413 names the receiver's own limit.
    const config = {
      policy: { auth: 'none' as const, session: false },
      bodyTooLargeMessage: `413 Payload Too Large - alert payloads are limited to ${PAYLOAD_LIMIT_BYTES} bytes`,
    };
    const response = { 200: AlertSummaries };
    const httpSchema = {
      summary: 'Receives alerts for an HTTP integration',
      operationId: 'notifyHttpIntegration',
      tags: ['alerts'],
      response,
    };
    const prometheusSchema = {
      summary: 'Receives alerts from Alertmanager for the Prometheus integration',
      operationId: 'notifyPrometheusIntegration',
      tags: ['alerts'],
      response,
    };
    // The OpenAPI document shows one templated path for all depths (and the optional `.json`).
    const security = ['alertIntegrationToken'];
    const httpDoc = { ...config, openapi: { path: '/{project_full_path}/alerts/notify/{name}/{endpoint_identifier}', security } };
    const prometheusDoc = { ...config, openapi: { path: '/{project_full_path}/prometheus/alerts/notify', security } };
    for (let segments = 2; segments <= MAX_PROJECT_SEGMENTS; segments += 1) {
      const project = Array.from({ length: segments }, (_, i) => `:p${i}`).join('/');
      scope.post(
        `/${project}/alerts/notify/:name/:endpoint`,
        { schema: httpSchema, config: httpDoc, onRequest: authenticate('http', segments), bodyLimit: PAYLOAD_LIMIT_BYTES },
        handle,
      );
      // Reference A1: `/prometheus/alerts/notify(.json)`, the suffix optional. A static path
      // has no optional part, so it is registered both ways, with the same handler and checks.
      for (const suffix of ['.json', '']) {
        scope.post(
          `/${project}/prometheus/alerts/notify${suffix}`,
          {
            schema: prometheusSchema,
            config: prometheusDoc,
            onRequest: authenticate('prometheus', segments),
            bodyLimit: PAYLOAD_LIMIT_BYTES,
          },
          handle,
        );
      }
    }
  });
}
