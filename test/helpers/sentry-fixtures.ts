import { gzipSync } from 'node:zlib';
import { envelope, hex32 } from './sentry.js';

/**
 * Requests shaped as each SDK of SPEC's ingestion table sends them, written from the SDKs'
 * documented protocol (develop.sentry.dev envelopes/store/session payloads) and the
 * observed @sentry/node wire format (reference README). Each returns the path suffix
 * (`store` or `envelope`), headers and body.
 */
export interface SdkRequest {
  sdk: string;
  endpoint: 'store' | 'envelope';
  headers: Record<string, string>;
  body: Buffer | string;
  /** What the stored error should look like. */
  expect: { title: string; items: string[] };
}

const auth = (key: string, client: string) => ({
  'x-sentry-auth': `Sentry sentry_version=7, sentry_client=${client}, sentry_key=${key}`,
});
const now = () => Date.now() / 1000;
const iso = () => new Date().toISOString();

/** Go 0.20: store, gzip, `exception` as a bare array, RFC 3339 timestamp. */
function go(key: string, n: number): SdkRequest {
  const event = {
    event_id: hex32(n),
    timestamp: iso(),
    level: 'error',
    platform: 'go',
    sdk: { name: 'sentry.go', version: '0.20.0' },
    server_name: 'api-1',
    user: { id: 'go-user' },
    exception: [
      {
        type: '*errors.errorString',
        value: 'connection refused',
        stacktrace: {
          frames: [
            { function: 'main', module: 'main', filename: 'main.go', abs_path: '/src/main.go', lineno: 12, in_app: true },
            { function: 'dial', module: 'example.com/app/db', filename: 'db.go', abs_path: '/src/db/db.go', lineno: 40, in_app: true },
          ],
        },
      },
    ],
  };
  return {
    sdk: 'go',
    endpoint: 'store',
    headers: { ...auth(key, 'sentry.go/0.20.0'), 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(JSON.stringify(event)),
    expect: { title: '*errors.errorString: connection refused', items: ['event'] },
  };
}

/** PHP 3.18: store, gzip, `logentry`-less message event with `message` as a string. */
function php(key: string, n: number): SdkRequest {
  const event = {
    event_id: hex32(n),
    timestamp: now(),
    platform: 'php',
    sdk: { name: 'sentry.php', version: '3.18.0' },
    level: 'warning',
    message: { message: 'Cache miss for %s', params: ['users'], formatted: 'Cache miss for users' },
    user: { email: 'php@example.com' },
    release: 'php-app@1.0.0',
  };
  return {
    sdk: 'php',
    endpoint: 'store',
    headers: { ...auth(key, 'sentry.php/3.18.0'), 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(JSON.stringify(event)),
    expect: { title: 'Cache miss for users', items: ['event'] },
  };
}

/** Python 1.21: envelope with lengths; an event and a session update in one envelope. */
function python(key: string, n: number): SdkRequest {
  const event = {
    event_id: hex32(n),
    timestamp: iso(),
    platform: 'python',
    level: 'error',
    release: 'py-app@2.0.0',
    environment: 'staging',
    sdk: { name: 'sentry.python', version: '1.21.0' },
    user: { ip_address: '203.0.113.9' },
    exception: {
      values: [
        {
          type: 'KeyError',
          value: "'user_id'",
          module: null,
          mechanism: { type: 'django', handled: false },
          stacktrace: {
            frames: [
              {
                filename: 'django/core/handlers/base.py',
                function: 'get_response',
                module: 'django.core.handlers.base',
                lineno: 181,
                in_app: false,
              },
              {
                filename: 'shop/views.py',
                function: 'checkout',
                module: 'shop.views',
                lineno: 77,
                in_app: true,
                context_line: "    uid = request.session['user_id']",
              },
            ],
          },
        },
      ],
    },
  };
  const session = {
    sid: 'f2d6a9b0-0000-4000-8000-000000000001',
    did: 'py-user',
    init: true,
    started: iso(),
    timestamp: iso(),
    status: 'ok',
    errors: 1,
    attrs: { release: 'py-app@2.0.0', environment: 'staging' },
  };
  return {
    sdk: 'python',
    endpoint: 'envelope',
    headers: { ...auth(key, 'sentry.python/1.21.0'), 'content-type': 'application/x-sentry-envelope' },
    body: envelope({ event_id: hex32(n), sent_at: iso() }, [
      { type: 'event', payload: event, headers: { content_type: 'application/json' } },
      { type: 'session', payload: session },
    ]),
    expect: { title: "KeyError: 'user_id'", items: ['event', 'session'] },
  };
}

/** Rust 0.31: envelope, event + an ended session; item headers with length. */
function rust(key: string, n: number): SdkRequest {
  const event = {
    event_id: hex32(n),
    level: 'fatal',
    platform: 'native',
    timestamp: now(),
    release: 'rs-app@0.3.1',
    sdk: { name: 'sentry.rust', version: '0.31.0' },
    user: { username: 'ferris' },
    exception: {
      values: [
        {
          type: 'panic',
          value: 'called `Option::unwrap()` on a `None` value',
          mechanism: { type: 'panic', handled: false },
          stacktrace: {
            frames: [
              { function: 'std::rt::lang_start', in_app: false },
              { function: 'app::load_config', filename: 'src/config.rs', lineno: 23, in_app: true },
            ],
          },
        },
      ],
    },
  };
  const session = {
    sid: 'a9f1b2c3-0000-4000-8000-000000000002',
    init: false,
    started: iso(),
    timestamp: iso(),
    status: 'crashed',
    errors: 1,
    duration: 1.5,
    attrs: { release: 'rs-app@0.3.1', environment: 'production' },
  };
  return {
    sdk: 'rust',
    endpoint: 'envelope',
    headers: { ...auth(key, 'sentry.rust/0.31.0') },
    body: envelope({ event_id: hex32(n) }, [
      { type: 'event', payload: event },
      { type: 'session', payload: session },
    ]),
    expect: { title: 'panic: called `Option::unwrap()` on a `None` value', items: ['event', 'session'] },
  };
}

/** Java 6.18: envelope with lengths, `sentry.java` client, a message event with `message.formatted`. */
function java(key: string, n: number): SdkRequest {
  const event = {
    event_id: hex32(n),
    timestamp: iso(),
    platform: 'java',
    level: 'info',
    logger: 'com.example.Billing',
    sdk: { name: 'sentry.java', version: '6.18.1' },
    message: { formatted: 'Invoice 42 could not be sent', message: 'Invoice {} could not be sent', params: ['42'] },
    user: { id: 'java-1' },
  };
  return {
    sdk: 'java',
    endpoint: 'envelope',
    headers: { ...auth(key, 'sentry.java/6.18.1'), 'content-type': 'application/x-sentry-envelope' },
    body: envelope({ event_id: hex32(n), sdk: { name: 'sentry.java', version: '6.18.1' } }, [
      { type: 'event', payload: event, headers: { content_type: 'application/json' } },
    ]),
    expect: { title: 'Invoice 42 could not be sent', items: ['event'] },
  };
}

/** Ruby 5.9: envelope, exception with several chained values (cause first). */
function ruby(key: string, n: number): SdkRequest {
  const event = {
    event_id: hex32(n),
    timestamp: iso(),
    platform: 'ruby',
    level: 'error',
    sdk: { name: 'sentry.ruby', version: '5.9.0' },
    transaction: 'OrdersController#create',
    user: { id: 7 },
    exception: {
      values: [
        {
          type: 'Errno::ECONNREFUSED',
          value: 'Connection refused',
          stacktrace: { frames: [{ function: 'connect', filename: 'net/http.rb', in_app: false }] },
        },
        {
          type: 'Orders::PaymentFailed',
          value: 'payment gateway unavailable',
          module: 'Orders',
          stacktrace: { frames: [{ function: 'create', filename: 'app/controllers/orders_controller.rb', lineno: 14, in_app: true }] },
        },
      ],
    },
  };
  return {
    sdk: 'ruby',
    endpoint: 'envelope',
    headers: { ...auth(key, 'sentry.ruby/5.9.0'), 'content-type': 'application/x-sentry-envelope' },
    body: envelope({ event_id: hex32(n), sent_at: iso() }, [
      { type: 'event', payload: event },
      { type: 'client_report', payload: { timestamp: now(), discarded_events: [] } },
    ]),
    expect: { title: 'Orders::PaymentFailed: payment gateway unavailable', items: ['event'] },
  };
}

/**
 * Node (observed @sentry/node wire format): key only in the query, no Content-Type, items
 * without length, float timestamps; captureMessage adds a synthetic exception without type.
 */
function node(key: string, n: number): SdkRequest & { query: string } {
  const event = {
    event_id: hex32(n),
    timestamp: now(),
    platform: 'javascript',
    level: 'info',
    message: 'Nightly export finished late',
    exception: { values: [{ value: 'Nightly export finished late', mechanism: { type: 'generic', handled: true, synthetic: true } }] },
    sdk: { name: 'sentry.javascript.node', version: '7.38.0' },
    user: { id: 'node-1' },
  };
  return {
    sdk: 'node',
    endpoint: 'envelope',
    query: `?sentry_version=7&sentry_key=${key}&sentry_client=sentry.javascript.node%2F7.38.0`,
    headers: {},
    body: envelope(
      { event_id: hex32(n), sent_at: iso(), sdk: { name: 'sentry.javascript.node', version: '7.38.0' } },
      [{ type: 'event', payload: event }],
      false,
    ),
    expect: { title: 'Nightly export finished late', items: ['event'] },
  };
}

export function sdkRequests(key: string): (SdkRequest & { query?: string })[] {
  return [go(key, 101), php(key, 102), python(key, 103), rust(key, 104), java(key, 105), ruby(key, 106), node(key, 107)];
}
