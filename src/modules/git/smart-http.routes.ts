import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { Platform } from '../../infra/platform.js';
import type { GitRepository } from './git.repository.js';
import { relativeRepositoryPath, type RepositoryStorages } from './git.storage.js';
import { BackendSlots } from './backend-slots.service.js';
import { BackendTimeoutError, BadBodyEncodingError, BodyTooLargeError, runHttpBackend } from './http-backend.exec.js';
import { PushCommandReader, appliedCommands, describePush } from './push-events.rules.js';
import { scopesAllow, type GitActor, type GitAuthenticator } from './smart-http.auth.js';
import { GitHttpError, READ_ONLY_MESSAGE, gitErrorHandler } from './smart-http.errors.js';
import { refusalOf, refusalReport } from './receive-pack-refusal.rules.js';
import { resolveTarget, type GitTarget, type TargetDeps } from './smart-http.target.js';

export interface SmartHttpDeps extends TargetDeps {
  platform: Platform;
  storages: RepositoryStorages;
  git: GitRepository;
  authenticator: GitAuthenticator;
}

/** The dependencies of one request: the module's, and the process's backend slots. */
interface HandlerDeps extends SmartHttpDeps {
  slots: BackendSlots;
}

type Endpoint = 'info/refs' | 'git-upload-pack' | 'git-receive-pack';
type Service = 'git-upload-pack' | 'git-receive-pack';

/** Groups nest up to 20 deep (the established product's limit), plus the project itself. */
const MAX_DEPTH = 22;
const GIT_PROTOCOL = /^[a-z0-9=:.,-]{1,64}$/i;
const SEGMENT = /^[A-Za-z0-9_.-]+$/;

/**
 * Git smart HTTP (`{base_url}/<path>.git/info/refs`, `/git-upload-pack`, `/git-receive-pack`).
 * The routes spell out each nesting depth (`/:s0/:s1/:repo.git/…`) instead of a root
 * wildcard, so they only ever match paths with a `.git/` segment and leave `/*` free for
 * other root routes (alert receivers). Credentials are handled here (policy `none`): git
 * needs a 401 with `WWW-Authenticate: Basic` before it sends any.
 */
export function smartHttpRoutes(app: FastifyInstance, moduleDeps: SmartHttpDeps): void {
  const { config } = moduleDeps.platform;
  const deps: HandlerDeps = { ...moduleDeps, slots: new BackendSlots(config.gitMaxConcurrencyPerIp, config.gitMaxConcurrency) };
  void app.register(async (scope) => {
    // Request bodies stay streams: packs go to git as they arrive, never into memory.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    scope.setErrorHandler(gitErrorHandler);
    const policy = { auth: 'none' as const };
    for (let depth = 0; depth < MAX_DEPTH; depth += 1) {
      const prefix = Array.from({ length: depth }, (_, i) => `/:s${i}`).join('');
      scope.get(`${prefix}/:repo.git/info/refs`, { config: { policy } }, (request, reply) => handle(deps, request, reply, 'info/refs'));
      scope.post(`${prefix}/:repo.git/git-upload-pack`, { config: { policy } }, (request, reply) =>
        handle(deps, request, reply, 'git-upload-pack'),
      );
      scope.post(`${prefix}/:repo.git/git-receive-pack`, { config: { policy } }, (request, reply) =>
        handle(deps, request, reply, 'git-receive-pack'),
      );
    }
  });
}

/** The repository path from the raw URL; encoded characters, dot segments and oddities are refused. */
function repositoryPath(request: FastifyRequest, endpoint: Endpoint): string {
  const rawPath = (request.raw.url ?? '').split('?')[0]?.replace(/\/+$/, '') ?? '';
  const suffix = `.git/${endpoint}`;
  if (!rawPath.startsWith('/') || !rawPath.endsWith(suffix)) throw GitHttpError.notFound();
  const repoPath = rawPath.slice(1, -suffix.length);
  const segments = repoPath.split('/');
  if (segments.some((s) => !SEGMENT.test(s) || s === '.' || s === '..')) throw GitHttpError.notFound();
  return repoPath;
}

async function handle(deps: HandlerDeps, request: FastifyRequest, reply: FastifyReply, endpoint: Endpoint): Promise<FastifyReply> {
  const repoPath = repositoryPath(request, endpoint);
  const service = serviceOf(request, endpoint);
  const write = service === 'git-receive-pack';
  const gitActor = await deps.authenticator.authenticate(request);
  const actor = gitActor?.actor ?? null;
  const target = await resolveTarget(repoPath, deps);
  const access = target ? await target.access(actor) : null;

  // Anonymous callers get 401 for anything they cannot use, so git retries with credentials
  // (and nobody learns whether a private repository exists).
  if (!target || !access?.visible) throw actor ? GitHttpError.notFound() : GitHttpError.unauthorized();
  if (!actor && (write || !access.read)) throw GitHttpError.unauthorized();
  if (actor && !scopesAllow(actor, write)) {
    throw GitHttpError.forbidden(`Your token needs the ${write ? 'write_repository' : 'read_repository'} scope.`);
  }
  if (write ? !access.write : !access.read) {
    throw GitHttpError.forbidden(
      write ? 'You are not allowed to push code to this project.' : 'You are not allowed to read this repository.',
    );
  }
  if (write && target.container.readOnly) return refuseReadOnly(request, reply, endpoint);
  return endpoint === 'git-receive-pack'
    ? receivePack(deps, request, reply, target, gitActor as GitActor)
    : runBackend(deps, request, reply, target, endpoint, service, write ? gitActor : null);
}

/** A push to a read-only repository: 403 with the message, which git shows for `info/refs`. */
async function refuseReadOnly(request: FastifyRequest, reply: FastifyReply, endpoint: Endpoint): Promise<FastifyReply> {
  if (endpoint !== 'git-receive-pack') throw GitHttpError.readOnly();
  // At the POST git would not show that body: the push is refused in the protocol instead.
  const encoding = request.headers['content-encoding'];
  const report = await refusalReport(request.body as Readable, typeof encoding === 'string' ? encoding : undefined, READ_ONLY_MESSAGE);
  if (!report) throw GitHttpError.readOnly();
  return sendReport(reply, report);
}

function serviceOf(request: FastifyRequest, endpoint: Endpoint): Service {
  if (endpoint !== 'info/refs') return endpoint;
  const service = (request.query as Record<string, unknown>).service;
  // Only smart HTTP is offered; the dumb protocol would bypass the access checks per file.
  if (service !== 'git-upload-pack' && service !== 'git-receive-pack') {
    throw new GitHttpError(403, 'Only the smart HTTP protocol is supported: please use a git client from 1.6.6 on.');
  }
  return service;
}

async function repositoryDir(deps: SmartHttpDeps, target: GitTarget): Promise<string> {
  const { container, repository } = target;
  const found = await deps.storages.resolve(container.storage, repository.kind, repository.id).catch((error: unknown) => {
    // A repository that leads out of its storage (a planted symlink) is never served.
    deps.platform.log.warn({ err: error }, 'repository refused');
    throw GitHttpError.notFound();
  });
  if (found) return found;
  // A container whose repository is not there yet (created moments ago, or a wiki never
  // written) gets an empty one, except while it is being moved.
  if (container.readOnly) throw GitHttpError.notFound();
  return deps.storages.ensure(container.storage, repository.kind, repository.id, container.defaultBranch);
}

async function runBackend(
  deps: HandlerDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  target: GitTarget,
  endpoint: Endpoint,
  service: Service,
  pusher: GitActor | null,
  reader?: PushCommandReader,
  finish: (exitCode: number | null) => Promise<void> = async () => undefined,
): Promise<FastifyReply> {
  await repositoryDir(deps, target);
  const { container, repository } = target;
  const { config } = deps.platform;
  const protocol = request.headers['git-protocol'];
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const slot = deps.slots.acquire(request.ip);
  if (typeof slot === 'string') {
    throw GitHttpError.busy(slot, slot === 'address' ? deps.slots.maxPerAddress : deps.slots.maxTotal);
  }
  const push = endpoint === 'git-receive-pack';
  try {
    const response = await runHttpBackend(
      {
        projectRoot: deps.storages.dir(container.storage),
        pathInfo: `/${relativeRepositoryPath(repository.kind, repository.id)}/${endpoint}`,
        method: endpoint === 'info/refs' ? 'GET' : 'POST',
        queryString: endpoint === 'info/refs' ? `service=${service}` : '',
        contentType: header('content-type'),
        contentEncoding: header('content-encoding'),
        gitProtocol: typeof protocol === 'string' && GIT_PROTOCOL.test(protocol) ? protocol : undefined,
        remoteUser: pusher ? pusher.actor.user.username : undefined,
        remoteAddr: request.ip,
        body: endpoint === 'info/refs' ? null : (request.body as Readable),
        maxBodyBytes: push ? config.gitMaxPushBytes : config.gitMaxUploadPackBytes,
        timeoutMs: config.gitTimeoutSeconds * 1000,
        onTimeout: () =>
          request.log.warn(
            { repository: relativeRepositoryPath(repository.kind, repository.id), service, timeout_seconds: config.gitTimeoutSeconds },
            'git http-backend ran past GIT_TIMEOUT_SECONDS: killed with its process group',
          ),
        release: slot,
        ...(reader ? { inspect: reader.feed } : {}),
      },
      finish,
    );
    request.raw.on('close', () => {
      if (!reply.raw.writableEnded) response.body.destroy();
    });
    return reply.code(response.status).headers(response.headers).send(response.body);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      const message = push
        ? `Push too large: the limit is ${error.limit} bytes (GIT_MAX_PUSH_SIZE).`
        : `Fetch request too large: the limit is ${error.limit} bytes.`;
      // git shows the body of a refused POST only as "RPC failed; HTTP 413": a push is refused
      // in the protocol instead, as receive-pack refuses refs, so git prints the message.
      const report = reader ? refusalOf(reader, message) : null;
      if (report) return sendReport(reply, report);
      throw new GitHttpError(413, message);
    }
    if (error instanceof BadBodyEncodingError) throw new GitHttpError(400, 'The request body is not valid gzip.');
    if (error instanceof BackendTimeoutError) {
      throw new GitHttpError(503, `The git operation took longer than ${config.gitTimeoutSeconds} seconds and was stopped.`);
    }
    throw error;
  }
}

function sendReport(reply: FastifyReply, report: Buffer): FastifyReply {
  return reply.code(200).header('content-type', 'application/x-git-receive-pack-result').header('cache-control', 'no-cache').send(report);
}

/** A push: counted as in flight (moves wait for it), then recorded as push events. */
async function receivePack(
  deps: HandlerDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  target: GitTarget,
  pusher: GitActor,
): Promise<FastifyReply> {
  const { platform, git } = deps;
  const { container } = target;
  const now = platform.clock.now();
  // Counted in flight until the process's time limit (and a minute) at most, should we crash.
  const pushId = await git.beginPush(container.kind, container.id, now, now + platform.config.gitTimeoutSeconds * 1000 + 60_000);
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    await git.endPush(pushId);
  };
  try {
    // A move may have begun since the check above; it waits for pushes it can see, and
    // this push sees its read-only flag (both sides write first, then read).
    const fresh = await deps.containers.find(container.kind, container.id);
    if (!fresh || fresh.readOnly || fresh.storage !== container.storage) {
      await end();
      return await refuseReadOnly(request, reply, 'git-receive-pack');
    }
    const reader = new PushCommandReader();
    const finish = async (exitCode: number | null) => {
      try {
        if (exitCode === 0 && target.projectId !== null) await recordPush(deps, target, pusher, reader);
      } catch (error) {
        request.log.error({ err: error }, 'recording push events failed');
      } finally {
        await end();
      }
    };
    return await runBackend(deps, request, reply, target, 'git-receive-pack', 'git-receive-pack', pusher, reader, finish);
  } catch (error) {
    await end();
    throw error;
  }
}

async function recordPush(deps: SmartHttpDeps, target: GitTarget, pusher: GitActor, reader: PushCommandReader): Promise<void> {
  const projectId = target.projectId;
  if (projectId === null) return;
  const repo = await deps.storages.resolve(target.container.storage, target.repository.kind, target.repository.id);
  if (!repo) return;
  const applied = await appliedCommands(repo, reader.commands);
  if (applied.length === 0) return;
  const { db, bus, clock, config } = deps.platform;
  const refs = await describePush(repo, applied, target.container.defaultBranch, config.pushEventActivitiesLimit);
  await deps.projects.touchActivity(projectId);
  if (refs.length === 0) return;
  await db.transaction().execute(async (trx) => {
    await bus.publish({ type: 'push_received', projectId, authorId: pusher.actor.user.id, refs, at: clock.now() }, trx);
  });
}
