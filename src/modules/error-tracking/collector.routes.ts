import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { ForbiddenError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../../infra/errors/index.js';
import {
  allowCors,
  answerPreflight,
  enforceIngestionLimits,
  ingestionScope,
  type ApiApp,
  type CorsRule,
  type IngestionLimits,
  type RateLimiter,
} from '../../infra/http/index.js';
import { parseRef } from '../../infra/refs.js';
import type { ProjectsService } from '../projects/index.js';
import { CollectorAnswer } from './error-tracking.schemas.js';
import { MAX_DECOMPRESSED_BYTES, decodeBody, parseFailure, parseStoreBody } from './collector.body.js';
import { parseEnvelope, parseEnvelopeHeaders } from './envelope.rules.js';
import type { IngestionService } from './ingestion.service.js';
import type { SettingsService } from './settings.service.js';
import { ingestResult } from '../../infra/domain-metrics.js';

export interface CollectorDeps {
  settings: SettingsService;
  ingestion: IngestionService;
  projects: ProjectsService;
  limiter: RateLimiter;
  limits: IngestionLimits;
  /** Counts one answer of the collector under its result (`/-/metrics`). */
  counted?: (result: string) => void;
}

/**
 * Where SDKs send to: the DSN `…/errortracking/api/v1/projects/<id>` makes them post to
 * `…/projects/api/<id>/envelope/` or `/store/` (reference C1); the older collector path stays
 * as an alias (reference README). Trailing slashes are optional (router ignoreTrailingSlash).
 */
const BASES = ['/errortracking/api/v1/projects/api/:project_id', '/api/v4/error_tracking/collector/api/:project_id'];
const Params = Type.Object({ project_id: Type.String({ minLength: 1, maxLength: 255 }) });
const tags = ['error_tracking'];
const response = { 200: CollectorAnswer };
const storeSchema = { summary: 'Receives one event from a Sentry SDK (store endpoint)', tags, response };
const envelopeSchema = { summary: 'Receives an envelope from a Sentry SDK: an event, sessions, attachments', tags, response };
/** The operationId, on the documented path (under /api/v4) only: ids are unique in the document. */
const named = (base: string, operationId: string) => (base.startsWith('/api/v4/') ? { operationId } : {});
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
  const { settings, ingestion, projects, limiter, limits } = deps;

  /** The project id of the URL; `undefined` for a path that names no project. */
  const projectIdOf = async (value: string): Promise<number | undefined> => {
    const ref = parseRef(value);
    if (ref.kind === 'id') return ref.id;
    return (await projects.findByRef(ref.path)).row?.id;
  };

  /**
   * Reference B3's checks (project, setting, key), answered so that a caller without a valid
   * key learns nothing about a project it could not see: no key at all is a 403 (reference C2)
   * before anything is looked up, and a project that does not exist, is not public, or has
   * tracking off answers as a wrong key does, 401 with SPEC's body (issue 18 item 5). A public
   * project, whose existence anyone may know, keeps the 404 for tracking off.
   */
  const admit = async (projectId: number | undefined, key: string | undefined): Promise<{ projectId: number; key: string }> => {
    if (!key) throw new ForbiddenError('missing sentry_key');
    const refusal = projectId === undefined ? 'unknown_key' : await settings.authorize(projectId, key);
    if (!refusal && projectId !== undefined) return { projectId, key };
    const project = projectId === undefined ? undefined : await projects.findById(projectId);
    if (!project || project.visibility !== 'public') throw new UnauthorizedError();
    const setting = await settings.find(project.id);
    if (refusal === 'disabled' || !setting || setting.active !== 1 || setting.integrated !== 1) throw new NotFoundError();
    throw new UnauthorizedError();
  };

  /** RATE_LIMITS `collector` (per address and key) and `collector_project`; SDKs read X-Sentry-Rate-Limits first (reference C6). */
  const enforceLimits = (request: FastifyRequest, admitted: { projectId: number; key: string }): Promise<void> =>
    enforceIngestionLimits(limiter, 'collector', limits, { address: request.ip, credential: admitted.key }, admitted.projectId);

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
    // Only the collector's posts count as ingestion attempts (not CORS preflights).
    const counted = deps.counted;
    if (counted) {
      scope.addHook('onResponse', async (request, reply) => {
        if (request.method === 'POST') counted(ingestResult(reply.statusCode));
      });
    }
    // Every 429 here (a rate limit, a full project) tells the SDK what to hold back and for how
    // long (reference C6: `retry_after:categories:scope`, empty categories meaning all).
    scope.addHook('onError', (_request, _reply, error, done) => {
      if (error instanceof TooManyRequestsError) {
        const name = error.headers['ratelimit-name'];
        const sentryScope = name && ingestionScope(name, 'collector') === 'sender' ? 'key' : 'project';
        error.headers['x-sentry-rate-limits'] = `${error.headers['retry-after']}::${sentryScope}`;
      }
      done();
    });

    for (const base of BASES) {
      for (const endpoint of ['store', 'envelope']) {
        scope.options(`${base}/${endpoint}`, { config: { policy: { auth: 'none' } } }, async (request, reply) =>
          answerPreflight(request, reply, CORS),
        );
      }

      scope.post(
        `${base}/store`,
        { schema: { ...storeSchema, ...named(base, 'storeSentryEvent'), params: Params }, config: { policy: { auth: 'none' } } },
        async (request, reply) => {
          const body = rawBody(request.body);
          const admitted = await admit(await projectIdOf(request.params.project_id), requestKey(request));
          await enforceLimits(request, admitted);
          const event = parseStoreBody(decodeBody(body, request.headers['content-encoding']));
          const id = await ingestion.storeEvent(admitted.projectId, event, request.ip);
          return reply.code(200).send({ id });
        },
      );

      scope.post(
        `${base}/envelope`,
        { schema: { ...envelopeSchema, ...named(base, 'sendSentryEnvelope'), params: Params }, config: { policy: { auth: 'none' } } },
        async (request, reply) => {
          const body = rawBody(request.body);
          const projectRef = await projectIdOf(request.params.project_id);
          let key = requestKey(request);
          let decoded: Buffer | null = null;
          if (!key) {
            decoded = decodeBody(body, request.headers['content-encoding']);
            key = dsnKey(parseEnvelopeHeaders(decoded));
          }
          const admitted = await admit(projectRef, key);
          await enforceLimits(request, admitted);
          const envelope = parseEnvelope(decoded ?? decodeBody(body, request.headers['content-encoding']));
          const fromDsn = dsnKey(envelope.headers);
          if (fromDsn && fromDsn !== key) throw parseFailure('conflicting sentry_key values');
          const id = await ingestion.storeEnvelope(admitted.projectId, envelope, request.ip);
          return reply.code(200).send(id ? { id } : {});
        },
      );
    }
  });
}

function rawBody(body: unknown): Buffer {
  if (!Buffer.isBuffer(body) || body.length === 0) throw parseFailure('the body is empty');
  return body;
}
