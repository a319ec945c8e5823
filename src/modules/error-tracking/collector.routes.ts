import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { RateLimit } from '../../config/index.js';
import { ForbiddenError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../../infra/errors/index.js';
import { allowCors, answerPreflight, type ApiApp, type CorsRule } from '../../infra/http/index.js';
import { parseRef } from '../../infra/refs.js';
import type { RateLimiter } from '../../infra/http/index.js';
import type { ProjectsService } from '../projects/index.js';
import { MAX_DECOMPRESSED_BYTES, decodeBody, parseFailure, parseStoreBody } from './collector.body.js';
import { parseEnvelope, parseEnvelopeHeaders } from './envelope.js';
import type { IngestionService } from './ingestion.service.js';
import type { SettingsService } from './settings.service.js';

export interface CollectorDeps {
  settings: SettingsService;
  ingestion: IngestionService;
  projects: ProjectsService;
  limiter: RateLimiter;
  limit: RateLimit | undefined;
}

/**
 * Where SDKs send to: the DSN `…/errortracking/api/v1/projects/<id>` makes them post to
 * `…/projects/api/<id>/envelope/` or `/store/` (reference C1); the older collector path stays
 * as an alias (reference README). Trailing slashes are optional (router ignoreTrailingSlash).
 */
const BASES = ['/errortracking/api/v1/projects/api/:project_id', '/api/v4/error_tracking/collector/api/:project_id'];
const Params = Type.Object({ project_id: Type.String({ minLength: 1, maxLength: 255 }) });
const SENTRY_KEY = /(?:^|[\s,])sentry_key=([^,\s]+)/;

/**
 * Browser SDKs post from the pages of the monitored application, on any origin. The key is
 * public and no cookie is read, so every origin may post and read the answer, including the
 * headers an SDK backs off by; a preflight may ask for the request headers of reference C2.
 */
const CORS: CorsRule = {
  methods: ['POST', 'OPTIONS'],
  headers: [
    'x-sentry-auth',
    'x-requested-with',
    'x-forwarded-for',
    'origin',
    'referer',
    'accept',
    'authentication',
    'authorization',
    'content-encoding',
    'transfer-encoding',
    'content-type',
  ],
  exposed: ['x-sentry-error', 'x-sentry-rate-limits', 'retry-after'],
};

function single(value: unknown): string | undefined {
  if (Array.isArray(value)) throw parseFailure('sentry_key is given more than once');
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `sentry_key` from the query string or `X-Sentry-Auth` (reference C2); they must agree. */
function requestKey(request: FastifyRequest): string | undefined {
  const fromQuery = single((request.query as Record<string, unknown> | undefined)?.sentry_key);
  const header = request.headers['x-sentry-auth'];
  const fromHeader = typeof header === 'string' ? SENTRY_KEY.exec(header)?.[1] : undefined;
  if (fromQuery && fromHeader && fromQuery !== fromHeader) throw parseFailure('conflicting sentry_key values');
  return fromQuery ?? fromHeader;
}

/** The public key of an envelope header's `dsn` (reference C2: envelopes may authenticate so). */
function dsnKey(headers: Record<string, unknown>): string | undefined {
  if (typeof headers.dsn !== 'string') return undefined;
  try {
    return new URL(headers.dsn).username || undefined;
  } catch {
    throw parseFailure('the envelope header dsn is not a URL');
  }
}

export function collectorRoutes(app: ApiApp, deps: CollectorDeps): void {
  const { settings, ingestion, projects, limiter, limit } = deps;

  const projectIdOf = async (value: string): Promise<number> => {
    const ref = parseRef(value);
    if (ref.kind === 'id') return ref.id;
    const found = await projects.findByRef(ref.path);
    if (!found.row) throw new NotFoundError('Project');
    return found.row.id;
  };

  /** Checks in the order of reference B3: project, setting, key. */
  const admit = async (projectId: number, key: string | undefined): Promise<void> => {
    const refusal = key ? await settings.authorize(projectId, key) : 'missing';
    if (!refusal) return;
    if (!(await projects.findById(projectId))) throw new NotFoundError('Project');
    const setting = await settings.find(projectId);
    if (refusal === 'disabled' || !setting || setting.active !== 1 || setting.integrated !== 1) throw new NotFoundError();
    // No credential at all is a 403 (reference C2); a wrong one is a 401 with SPEC's exact body
    // ("Errors": `{message: 401 Unauthorized}`, as on every other route).
    if (refusal === 'missing') throw new ForbiddenError('missing sentry_key');
    throw new UnauthorizedError();
  };

  /** RATE_LIMITS `collector` per project; SDKs read X-Sentry-Rate-Limits first (reference C6). */
  const enforceLimit = async (projectId: number): Promise<void> => {
    try {
      await limiter.enforce('collector', `project:${projectId}`, limit);
    } catch (error) {
      if (error instanceof TooManyRequestsError) error.headers['x-sentry-rate-limits'] = `${error.headers['retry-after']}::project`;
      throw error;
    }
  };

  void app.register(async (scope: ApiApp) => {
    // SDKs send envelopes without a Content-Type, as text/plain, JSON or form types
    // (reference C3): every type is read as raw bytes and decoded here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_DECOMPRESSED_BYTES }, (_request, body, done) => done(null, body));
    // Set first, so refusals (401, 403, 413, 429) are readable cross-origin too.
    scope.addHook('onRequest', (request, reply, done) => {
      allowCors(request, reply, CORS);
      done();
    });

    for (const base of BASES) {
      for (const endpoint of ['store', 'envelope']) {
        scope.options(`${base}/${endpoint}`, { config: { policy: { auth: 'none' } } }, async (request, reply) =>
          answerPreflight(request, reply, CORS),
        );
      }

      scope.post(`${base}/store`, { schema: { params: Params }, config: { policy: { auth: 'none' } } }, async (request, reply) => {
        const body = rawBody(request.body);
        const projectId = await projectIdOf(request.params.project_id);
        await admit(projectId, requestKey(request));
        await enforceLimit(projectId);
        const event = parseStoreBody(decodeBody(body, request.headers['content-encoding']));
        const id = await ingestion.storeEvent(projectId, event, request.ip);
        return reply.code(200).send({ id });
      });

      scope.post(`${base}/envelope`, { schema: { params: Params }, config: { policy: { auth: 'none' } } }, async (request, reply) => {
        const body = rawBody(request.body);
        const projectId = await projectIdOf(request.params.project_id);
        let key = requestKey(request);
        let decoded: Buffer | null = null;
        if (!key) {
          decoded = decodeBody(body, request.headers['content-encoding']);
          key = dsnKey(parseEnvelopeHeaders(decoded));
        }
        await admit(projectId, key);
        await enforceLimit(projectId);
        const envelope = parseEnvelope(decoded ?? decodeBody(body, request.headers['content-encoding']));
        const fromDsn = dsnKey(envelope.headers);
        if (fromDsn && fromDsn !== key) throw parseFailure('conflicting sentry_key values');
        const id = await ingestion.storeEnvelope(projectId, envelope, request.ip);
        return reply.code(200).send(id ? { id } : {});
      });
    }
  });
}

function rawBody(body: unknown): Buffer {
  if (!Buffer.isBuffer(body) || body.length === 0) throw parseFailure('the body is empty');
  return body;
}
