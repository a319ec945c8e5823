import { spawn } from 'node:child_process';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { gitEnv } from './git.exec.js';

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
  timeoutMs: number;
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
      done(new BodyTooLargeError(this.limit));
      return;
    }
    this.inspect?.(chunk);
    done(null, chunk);
  }
}

const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Runs `git http-backend` as a CGI program (RFC 3875 variables) and streams in both
 * directions: the request body flows into it as it arrives (gzip decoded here, so the size
 * limit counts real bytes), its output flows to the client after the CGI headers are read.
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
  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'], timeout: request.timeoutMs, killSignal: 'SIGKILL' });
  const body = new PassThrough();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 4096) stderr += chunk.toString('utf8');
  });

  return new Promise<BackendResponse>((resolve, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      child.kill('SIGKILL');
      if (!settled) {
        settled = true;
        reject(error);
      } else body.destroy(error);
    };
    child.on('error', fail);

    if (request.body) {
      const encoding = request.contentEncoding?.toLowerCase();
      const limited = new LimitedStream(request.maxBodyBytes, request.inspect);
      const done =
        encoding === 'gzip' || encoding === 'x-gzip'
          ? pipeline(request.body, createGunzip(), limited, child.stdin)
          : pipeline(request.body, limited, child.stdin);
      done.catch((error: unknown) => {
        fail(error instanceof Error ? error : new Error(String(error)));
      });
    } else {
      child.stdin.end();
    }
    child.stdin.on('error', () => undefined);

    let head = Buffer.alloc(0);
    // A slow client slows git down instead of filling memory with pack data.
    const forward = (chunk: Buffer) => {
      if (!body.write(chunk)) {
        child.stdout.pause();
        body.once('drain', () => child.stdout.resume());
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (settled) {
        forward(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(HEADER_END);
      if (end < 0) {
        if (head.length > MAX_HEADER_BYTES) fail(new Error('git http-backend sent oversized headers'));
        return;
      }
      const { status, headers } = parseCgiHeaders(head.subarray(0, end).toString('latin1'));
      settled = true;
      resolve({ status, headers, body });
      const rest = head.subarray(end + HEADER_END.length);
      if (rest.length > 0) forward(rest);
    });
    child.on('close', (code) => {
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
