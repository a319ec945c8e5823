import { gzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';
import { createProject, type TestUser } from './factories.js';

/** Error tracking helpers: enabling a project and speaking the Sentry wire protocol (reference C). */
export interface TrackedProject {
  projectId: number;
  key: string;
  keyId: number;
  dsn: string;
}

export async function enableTracking(t: TestApp, projectId: number, token?: string): Promise<TrackedProject> {
  const put = await t.api('PUT', `/projects/${projectId}/error_tracking/settings`, {
    ...(token ? { token } : {}),
    body: { active: true, integrated: true },
  });
  if (put.statusCode !== 200) throw new Error(`enable failed: ${put.statusCode} ${put.body}`);
  const keys = await t.api('GET', `/projects/${projectId}/error_tracking/client_keys`, token ? { token } : {});
  const key = keys.json()[0] as { id: number; public_key: string; tracker_dsn: string };
  return { projectId, key: key.public_key, keyId: key.id, dsn: key.tracker_dsn };
}

/** A new project of `owner` with error tracking on, set up with the owner's token. */
export async function trackedProject(t: TestApp, owner: TestUser): Promise<TrackedProject> {
  return enableTracking(t, (await createProject(t.app, owner)).id, owner.token);
}

export const storePath = (projectId: number | string) => `/errortracking/api/v1/projects/api/${projectId}/store/`;
export const envelopePath = (projectId: number | string) => `/errortracking/api/v1/projects/api/${projectId}/envelope/`;

export const sentryAuth = (key: string, client = 'sentry.test/1.0') =>
  `Sentry sentry_version=7, sentry_client=${client}, sentry_timestamp=1700000000, sentry_key=${key}`;

/** Serialises an envelope; items get a `length` header unless `withLength` is false. */
export function envelope(
  headers: Record<string, unknown>,
  items: { type: string; payload: unknown; headers?: Record<string, unknown> }[],
  withLength = true,
): string {
  const lines = [JSON.stringify(headers)];
  for (const item of items) {
    const payload = typeof item.payload === 'string' ? item.payload : JSON.stringify(item.payload);
    const itemHeaders = { type: item.type, ...(withLength ? { length: Buffer.byteLength(payload) } : {}), ...item.headers };
    lines.push(JSON.stringify(itemHeaders), payload);
  }
  return `${lines.join('\n')}\n`;
}

export function post(
  t: TestApp,
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url, headers, payload: body });
}

export const gzip = (text: string): Buffer => gzipSync(Buffer.from(text));

export const hex32 = (n: number): string => n.toString(16).padStart(32, '0');

/** A Python-style exception event (frames oldest first, the raising frame last). */
export function exceptionEvent(options: {
  eventId?: string;
  type?: string;
  value?: string;
  fn?: string;
  module?: string;
  filename?: string;
  lineno?: number;
  user?: Record<string, unknown>;
  platform?: string;
  timestamp?: number | string;
  fingerprint?: string[];
  release?: string;
  environment?: string;
}): Record<string, unknown> {
  return {
    ...(options.eventId ? { event_id: options.eventId } : {}),
    platform: options.platform ?? 'python',
    level: 'error',
    timestamp: options.timestamp ?? Date.now() / 1000,
    ...(options.release ? { release: options.release } : {}),
    environment: options.environment ?? 'production',
    ...(options.user ? { user: options.user } : {}),
    ...(options.fingerprint ? { fingerprint: options.fingerprint } : {}),
    exception: {
      values: [
        {
          type: options.type ?? 'ZeroDivisionError',
          value: options.value ?? 'division by zero',
          module: null,
          stacktrace: {
            frames: [
              { filename: 'lib/runner.py', function: 'run', module: 'runner', lineno: 10, in_app: false },
              {
                filename: options.filename ?? 'app/views.py',
                abs_path: `/srv/${options.filename ?? 'app/views.py'}`,
                function: options.fn ?? 'compute',
                module: options.module ?? 'app.views',
                lineno: options.lineno ?? 42,
                context_line: '    return total / count',
                pre_context: ['def compute(total, count):'],
                post_context: [''],
                in_app: true,
              },
            ],
          },
        },
      ],
    },
  };
}
