// Request generators for loads whose bodies differ per request (autocannon setupRequest).
// They run inside the load process, so they must be plain functions of their arguments.
import { randomUUID } from 'node:crypto';

type Request = { method?: string; path?: string; headers?: Record<string, string>; body?: string };
type Context = Record<string, unknown>;
export interface Generator {
  setupRequest: (request: Request, context: Context) => Request;
  onResponse?: (status: number, body: string, context: Context) => void;
}
export type Factory = (args: Record<string, unknown>) => Generator | ((request: Request) => Request);

/** A 2 KB JSON document with a field that changes every request. */
export function payload2k(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...extra, filler: 'x'.repeat(1900), id: randomUUID() };
}

export const factories: Record<string, Factory> = {
  /** A 2 KB JSON body, different each time (the insert baseline). */
  'json-2k': () => (request) => ({ ...request, body: JSON.stringify(payload2k()) }),
  /** A generic alert of about 2 KB whose payload (and so fingerprint) is new every time. */
  'alert-new': () => (request) => ({
    ...request,
    body: JSON.stringify(
      payload2k({ title: 'Disk almost full', severity: 'high', service: 'db', monitoring_tool: 'bench', hosts: ['db-1'] }),
    ),
  }),
  /** Refresh grants: each connection follows its own rotation chain from a seeded token. */
  'refresh-chain': (args) => {
    // Every load process (warm-up and each round) starts from its own slice of fresh tokens:
    // a previous round has already rotated the ones before. autocannon resets a request's
    // context after each request, so the live tokens sit in one queue: a request takes one,
    // its answer puts the rotated one back (one in flight per connection).
    const perRound = Number(args.perRound ?? 128);
    const round = Number(args.round ?? 0);
    const queue = (args.tokens as string[]).slice(round * perRound, (round + 1) * perRound);
    let last = queue[0] ?? '';
    return {
      setupRequest: (request) => {
        last = queue.shift() ?? last;

        const body = new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: last,
          client_id: String(args.clientId),
          client_secret: String(args.secret),
          redirect_uri: String(args.redirectUri),
        }).toString();
        return { ...request, body };
      },
      onResponse: (status, body) => {
        if (status === 200) queue.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
        else if (process.env.BENCH_DEBUG) process.stderr.write(`refresh failed: ${status} ${body}\n`);
      },
    };
  },
  /** A Sentry envelope with one exception event, about 2 KB; `distinct` gives each a new error type. */
  envelope: (args) => (request) => {
    const eventId = randomUUID().replace(/-/g, '');
    const type = args.distinct ? `BenchError${eventId.slice(0, 12)}` : 'BenchError';
    const event = {
      event_id: eventId,
      timestamp: Date.now() / 1000,
      platform: 'node',
      level: 'error',
      environment: 'bench',
      release: 'bench@1.0.0',
      user: { id: String(Math.floor(Math.random() * 1000)) },
      exception: {
        values: [
          {
            type,
            value: 'Something broke while benchmarking',
            stacktrace: {
              frames: Array.from({ length: 8 }, (_, i) => ({
                filename: `/app/src/module${i}.js`,
                function: `handler${i}`,
                module: `module${i}`,
                lineno: 10 + i,
                colno: 5,
                in_app: i > 3,
                context_line: '    const value = compute(input, options);',
              })),
            },
          },
        ],
      },
      extra: { filler: 'x'.repeat(600) },
    };
    const payload = JSON.stringify(event);
    const body = `${JSON.stringify({ event_id: eventId, sent_at: new Date().toISOString() })}\n${JSON.stringify({ type: 'event', length: Buffer.byteLength(payload) })}\n${payload}\n`;
    return { ...request, body };
  },
  /** The same generic alert every time: grouped onto one open alert. */
  'alert-same': () => {
    const body = JSON.stringify({
      title: 'Disk almost full',
      severity: 'high',
      service: 'db',
      monitoring_tool: 'bench',
      filler: 'x'.repeat(1900),
    });
    return (request) => ({ ...request, body });
  },
};
