import { spawn } from 'node:child_process';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { countGitProcess, gitEnv } from './git.exec.js';

export interface BackendRequest {
  /** The storage directory (GIT_PROJECT_ROOT). */
  projectRoot: string;
  /** `/<relative repository path>/<info/refs|git-upload-pack|git-receive-pack>`, computed by us. */
  pathInfo: string;
  method: 'GET' | 'POST';
  queryString: string;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** The `Git-Protocol` request header (protocol v2), already checked. */
  gitProtocol: string | undefined;
  /** Set only for an authorised push: http-backend enables receive-pack only then. */
  remoteUser: string | undefined;
  remoteAddr: string;
  body: Readable | null;
  maxBodyBytes: number;
  /** The process and its children are killed after this long (GIT_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** Told when the time limit killed the process (to log it). */
  onTimeout?: () => void;
  /** Called once, when the process has ended (its concurrency slot is free again). */
  release?: () => void;
  /** Sees the (decoded) request body as it streams by (push commands). */
  inspect?: (chunk: Buffer) => void;
}

export interface BackendResponse {
  status: number;
  headers: Record<string, string>;
  /** The response body; it ends only after `finish` (given to runHttpBackend) resolved. */
  body: Readable;
}

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

/** A `Content-Encoding: gzip` body that does not inflate. */
export class BadBodyEncodingError extends Error {
  constructor() {
    super('the request body is not valid gzip');
  }
}

/** The process ran past its time limit before it answered. */
export class BackendTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`git http-backend ran longer than ${timeoutMs} ms`);
  }
}

/** Passes bytes through, failing once more than `limit` went by; lets `inspect` watch them. */
class LimitedStream extends Transform {
  private seen = 0;
  constructor(
    private readonly limit: number,
    private readonly inspect?: (chunk: Buffer) => void,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) {
      // The part within the limit is still seen: a push's commands, for the refusal.
      const within = this.limit - (this.seen - chunk.length);
      if (within > 0) this.inspect?.(chunk.subarray(0, within));
      done(new BodyTooLargeError(this.limit));
      return;
    }
    this.inspect?.(chunk);
    done(null, chunk);
  }
}

const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;
/** Output held while the request body still arrives (progress at most); past this git waits. */
const MAX_HELD_BYTES = 1024 * 1024;
/** After SIGTERM (git removes its quarantined objects), how long before SIGKILL. */
const TERM_GRACE_MS = 5000;

/**
 * Runs `git http-backend` as a CGI program (RFC 3875 variables) and streams in both
 * directions: the request body flows into it as it arrives (gzip decoded here, so the size
 * limit counts real bytes), its output flows to the client once the whole body went in.
 * http-backend prints its CGI headers before it reads the body; answering them at once would
 * leave no way to refuse a body that turns out too large or not gzip but to reset the
 * connection (issue 18). Receive-pack and upload-pack answer only after reading their input,
 * so holding the output until then delays nothing. The process runs in its own process group,
 * so a time limit or a refusal stops its children (receive-pack, pack-objects) too.
 * `finish(exitCode)` runs after the program exits and before the response ends, so work
 * that must be visible once the client returns (push events) is done by then.
 */
export function runHttpBackend(request: BackendRequest, finish: (exitCode: number | null) => Promise<void>): Promise<BackendResponse> {
  const env = gitEnv({
    GIT_PROJECT_ROOT: request.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: request.pathInfo,
    REQUEST_METHOD: request.method,
    QUERY_STRING: request.queryString,
    REMOTE_ADDR: request.remoteAddr,
    ...(request.contentType ? { CONTENT_TYPE: request.contentType } : {}),
    ...(request.gitProtocol ? { GIT_PROTOCOL: request.gitProtocol, HTTP_GIT_PROTOCOL: request.gitProtocol } : {}),
    ...(request.remoteUser ? { REMOTE_USER: request.remoteUser } : {}),
  });
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const uncount = countGitProcess();
  child.on('close', uncount);
  child.on('error', uncount);
  const body = new PassThrough();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString('utf8');
  });
  let exited = false;
  // Never signal a group whose leader is gone: its id may belong to another group by then.
  const signalGroup = (signal: NodeJS.Signals) => {
    if (exited || child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  let timer: NodeJS.Timeout | undefined;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearTimeout(timer);
    request.release?.();
  };

  return new Promise<BackendResponse>((resolve, reject) => {
    let settled = false;
    // Output nobody will read is dropped, so the pipes reach their end and 'close' comes
    // (it frees the slot and ends the push).
    let discarding = false;
    const discard = () => {
      discarding = true;
      child.stdout.resume();
    };
    const fail = (error: Error, signal: NodeJS.Signals = 'SIGKILL') => {
      signalGroup(signal);
      if (signal !== 'SIGKILL') setTimeout(() => signalGroup('SIGKILL'), TERM_GRACE_MS).unref();
      discard();
      if (!settled) {
        settled = true;
        reject(error);
      } else body.destroy(error);
    };
    timer = setTimeout(() => {
      request.onTimeout?.();
      fail(new BackendTimeoutError(request.timeoutMs));
    }, request.timeoutMs);
    child.on('error', (error) => {
      release();
      fail(error);
    });

    let bodyDone = request.body === null;
    let bodyFailed = false;
    if (request.body) {
      const source = request.body;
      const encoding = request.contentEncoding?.toLowerCase();
      const gunzip = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : null;
      const limited = new LimitedStream(request.maxBodyBytes, request.inspect);
      // Piped by hand: on a refusal the request must keep flowing (to nowhere) so the client
      // reads the answer, where `pipeline` would destroy it and with it the connection.
      const refuse = (error: Error) => {
        if (bodyFailed || bodyDone) return;
        bodyFailed = true;
        source.unpipe();
        gunzip?.unpipe();
        limited.unpipe();
        gunzip?.destroy();
        limited.destroy();
        child.stdin.destroy();
        source.resume();
        // SIGTERM lets receive-pack remove the objects it quarantined.
        fail(error, 'SIGTERM');
      };
      source.on('error', refuse);
      gunzip?.on('error', () => refuse(new BadBodyEncodingError()));
      limited.on('error', refuse);
      if (gunzip) source.pipe(gunzip).pipe(limited);
      else source.pipe(limited);
      limited.pipe(child.stdin);
      child.stdin.on('finish', () => {
        bodyDone = true;
        settle();
      });
    } else {
      child.stdin.end();
    }
    child.stdin.on('error', () => undefined);

    let head: Buffer = Buffer.alloc(0);
    let parsed: { status: number; headers: Record<string, string> } | null = null;
    const held: Buffer[] = [];
    let heldBytes = 0;
    // A slow client slows git down instead of filling memory with pack data.
    const forward = (chunk: Buffer) => {
      if (!body.write(chunk)) {
        child.stdout.pause();
        body.once('drain', () => child.stdout.resume());
      }
    };
    function settle(): void {
      if (settled || !parsed || (!bodyDone && !exited)) return;
      settled = true;
      resolve({ ...parsed, body });
      for (const chunk of held.splice(0)) forward(chunk);
      if (!body.writableNeedDrain) child.stdout.resume();
    }
    child.stdout.on('data', (chunk: Buffer) => {
      if (discarding) return;
      if (settled) {
        forward(chunk);
        return;
      }
      let rest = chunk;
      if (!parsed) {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf(HEADER_END);
        if (end < 0) {
          if (head.length > MAX_HEADER_BYTES) fail(new Error('git http-backend sent oversized headers'));
          return;
        }
        parsed = parseCgiHeaders(head.subarray(0, end).toString('latin1'));
        rest = head.subarray(end + HEADER_END.length);
      }
      if (rest.length > 0) {
        held.push(rest);
        heldBytes += rest.length;
        if (heldBytes > MAX_HELD_BYTES) child.stdout.pause();
      }
      settle();
    });
    child.on('exit', () => {
      exited = true;
    });
    // The client went away mid-answer: git would block on a full pipe until the time limit.
    body.on('close', () => {
      if (body.writableFinished) return;
      signalGroup('SIGKILL');
      discard();
    });
    child.on('close', (code) => {
      exited = true;
      release();
      if (request.body && !bodyDone && !bodyFailed) {
        // git answered and stopped reading early (it refused the request): that answer stands,
        // and the rest of the body flows away so the connection stays usable.
        request.body.unpipe();
        request.body.resume();
      }
      if (!bodyFailed) settle();
      if (!settled) {
        settled = true;
        reject(new Error(`git http-backend exited ${code ?? 'on a signal'} without a response: ${stderr.trim().slice(0, 300)}`));
        return;
      }
      finish(code)
        .catch(() => undefined)
        .finally(() => body.end());
    });
  });
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon < 1) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers };
}
