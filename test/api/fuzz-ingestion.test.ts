// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIntegration, pathOf, type CreatedIntegration } from '../helpers/alerts.js';
import { enableTracking, envelope, envelopePath, hex32, sentryAuth, storePath } from '../helpers/sentry.js';

/**
 * Hostile input on the ingestion routes (issue 10, deliverable 6): the alert notify URLs and
 * the error-tracking collector. Random, truncated, oversized and deeply nested bodies, wrong
 * Content-Type, bad keys, broken gzip/deflate/br, invalid UTF-8, wrong item lengths and huge
 * headers. No answer may be a 5xx; each refusal is a 4xx with a JSON `message`; valid input
 * answers 200; and the server still works afterwards. FUZZ_RUNS raises the number of cases
 * (`npm run fuzz`).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 30);

function assertClear(res: LightMyRequestResponse, context: string, allowed: number[]): void {
  assert.ok(res.statusCode < 500, `${context}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  assert.ok(allowed.includes(res.statusCode), `${context}: unexpected ${res.statusCode} ${res.body.slice(0, 300)}`);
  if (res.statusCode >= 400) {
    const body = res.json<Record<string, unknown>>();
    assert.ok('message' in body, `${context}: ${res.statusCode} without message: ${res.body.slice(0, 200)}`);
  }
}

const nested = (depth: number): unknown => {
  let value: unknown = { title: 'deep' };
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
};

/** Bytes that are not valid UTF-8 (lone continuation bytes, overlongs, truncated sequences). */
const invalidUtf8 = fc.constantFrom(
  Buffer.from([0x80, 0x81]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0xed, 0xa0, 0x80]),
);

const jsonish = fc.oneof(
  fc.jsonValue({ maxDepth: 5 }),
  fc.record({ title: fc.oneof(fc.string(), fc.integer(), fc.constant(null)), description: fc.string() }, { requiredKeys: [] }),
  fc.record({
    title: fc.string({ minLength: 1, maxLength: 50 }),
    start_time: fc.oneof(fc.string(), fc.integer(), fc.constant('2026-01-01T00:00:00Z')),
    hosts: fc.oneof(fc.string(), fc.array(fc.string()), fc.integer()),
    severity: fc.oneof(fc.string(), fc.constantFrom('critical', 'high', 'medium', 'low', 'info', 'unknown')),
    fingerprint: fc.oneof(fc.string(), fc.array(fc.string()), fc.object()),
  }),
  fc.record({ version: fc.constant('4'), status: fc.string(), alerts: fc.array(fc.object({ maxDepth: 2 }), { maxLength: 5 }) }),
  fc.nat({ max: 200 }).map(nested),
);

// Hundreds of requests from one address to one key: the default ingestion limits (issue 18) would refuse most.
const UNLIMITED_INGESTION = { RATE_LIMITS: 'sign_in=10/m,user_code=10/m' };

describe('hostile input on the alert notify URLs', () => {
  let t: TestApp;
  let http: CreatedIntegration;
  let prometheus: CreatedIntegration;
  before(async () => {
    t = await createTestApp({ env: UNLIMITED_INGESTION });
    const project = (await t.api('POST', '/projects', { body: { name: 'fuzz', path: 'fuzz-notify' } })).json();
    http = await createIntegration(t, project.id, { name: 'fuzz', type: 'http', active: true });
    prometheus = await createIntegration(t, project.id, { name: 'prom', type: 'prometheus', active: true });
  });
  after(() => t.close());

  const body = fc.oneof(
    jsonish.map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
    jsonish.map((v) => Buffer.from((JSON.stringify(v) ?? 'null').slice(0, -1))),
    fc.string({ maxLength: 300 }).map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    invalidUtf8.map((bad) => Buffer.concat([Buffer.from('{"title":"'), bad, Buffer.from('"}')])),
  );
  const contentType = fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '',
  );
  const auth = fc.oneof(
    fc.constant('good'),
    fc.constant('basic-good'),
    fc.constant('none'),
    fc.string({ maxLength: 80 }).map((s) => `Bearer ${s.replace(/[\r\n]/g, '')}`),
    fc.string({ maxLength: 80 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
    fc.constantFrom('Basic', 'Bearer', 'Basic !!!', `Bearer bsa_${'A'.repeat(43)}`, 'Token x'),
  );

  it('random bodies, content types and keys: never 5xx, each refusal a clear 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), body, contentType, auth, async (usePrometheus, payload, type, key) => {
        const integration = usePrometheus ? prometheus : http;
        const headers: Record<string, string> = {};
        if (type) headers['content-type'] = type;
        if (key === 'good') headers.authorization = `Bearer ${integration.token}`;
        else if (key === 'basic-good') headers.authorization = `Basic ${Buffer.from(`x:${integration.token}`).toString('base64')}`;
        else if (key !== 'none') headers.authorization = key;
        const res = await t.app.inject({ method: 'POST', url: pathOf(integration.url), headers, payload });
        assertClear(res, `${type} ${key.slice(0, 20)} ${payload.subarray(0, 60).toString('hex')}`, [200, 400, 401, 413, 415, 422]);
        if (!key.startsWith('good') && key !== 'basic-good') assert.equal(res.statusCode, 401, 'a wrong key is refused before the body');
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it('oversized and too deeply nested bodies are 413 and 400', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${http.token}` };
    const big = await t.app.inject({
      method: 'POST',
      url: pathOf(http.url),
      headers,
      payload: JSON.stringify({ title: 'big', description: 'x'.repeat(1024 * 1024 + 10) }),
    });
    assertClear(big, 'oversized', [413]);
    const deepText = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const deep = await t.app.inject({ method: 'POST', url: pathOf(http.url), headers, payload: deepText });
    assertClear(deep, 'deep', [400]);
  });

  it('valid alerts still answer 200 afterwards', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: pathOf(http.url),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${http.token}` },
      payload: JSON.stringify({ title: 'still alive' }),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json()[0].title, 'still alive');
  });
});

describe('hostile input on the error-tracking collector', () => {
  let t: TestApp;
  let projectId: number;
  let key: string;
  before(async () => {
    t = await createTestApp({ env: UNLIMITED_INGESTION });
    projectId = (await t.api('POST', '/projects', { body: { name: 'fuzz', path: 'fuzz-collector' } })).json().id;
    key = (await enableTracking(t, projectId)).key;
  });
  after(() => t.close());

  let counter = 0;
  const eventId = () => hex32(Date.now() * 1000 + (counter += 1));

  const item = fc.record({
    type: fc.oneof(
      fc.constantFrom('event', 'session', 'sessions', 'transaction', 'attachment', 'client_report'),
      fc.string({ maxLength: 10 }),
    ),
    payload: fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.string({ maxLength: 100 })),
    length: fc.oneof(fc.constant<number | undefined>(undefined), fc.integer({ min: -5, max: 5000 })),
  });
  const randomEnvelope = fc.oneof(
    // Structured but random: headers, item types, payloads, right or wrong lengths.
    fc.tuple(fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant({})), fc.array(item, { maxLength: 4 })).map(([header, items]) => {
      const lines = [JSON.stringify(header) ?? '{}'];
      for (const it of items) {
        const payload = typeof it.payload === 'string' ? it.payload : JSON.stringify(it.payload);
        lines.push(JSON.stringify({ type: it.type, ...(it.length !== undefined ? { length: it.length } : {}) }), payload ?? '');
      }
      return Buffer.from(lines.join('\n'));
    }),
    fc.string({ maxLength: 400 }).map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
    invalidUtf8.map((bad) => {
      const id = eventId();
      return Buffer.concat([
        Buffer.from(`{"event_id":"${id}"}\n{"type":"event"}\n{"event_id":"${id}","message":"`),
        bad,
        Buffer.from('"}\n'),
      ]);
    }),
    fc.constant(null).map(() => {
      const id = eventId();
      return Buffer.from(envelope({ event_id: id }, [{ type: 'event', payload: { event_id: id, message: 'valid' } }]));
    }),
  );
  const encoding = fc.constantFrom('none', 'gzip', 'deflate', 'br', 'bad-gzip', 'bad-deflate', 'bad-br', 'truncated-gzip', 'unknown');
  const encode = (raw: Buffer, how: string): { payload: Buffer; header?: string } => {
    switch (how) {
      case 'gzip':
        return { payload: gzipSync(raw), header: 'gzip' };
      case 'deflate':
        return { payload: deflateSync(raw), header: 'deflate' };
      case 'br':
        return { payload: brotliCompressSync(raw), header: 'br' };
      case 'bad-gzip':
        return { payload: Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), raw]), header: 'gzip' };
      case 'bad-deflate':
        return { payload: raw, header: 'deflate' };
      case 'bad-br':
        return { payload: Buffer.concat([Buffer.from([0xff, 0xff]), raw]), header: 'br' };
      case 'truncated-gzip': {
        const zipped = gzipSync(raw);
        return { payload: zipped.subarray(0, Math.max(1, zipped.length - 6)), header: 'gzip' };
      }
      case 'unknown':
        return { payload: raw, header: 'compress' };
      default:
        return { payload: raw };
    }
  };
  const credentials = fc.oneof(
    fc.constant('good'),
    fc.constant('query'),
    fc.constant('none'),
    fc.string({ maxLength: 40 }).map((s) => `Sentry sentry_key=${s.replace(/[\r\n]/g, '')}`),
    fc.constant('huge'),
  );

  it('random envelopes, encodings, keys and headers: never 5xx, each refusal a clear 4xx', async () => {
    await fc.assert(
      fc.asyncProperty(randomEnvelope, encoding, credentials, fc.boolean(), async (raw, how, auth, store) => {
        const { payload, header } = encode(raw, how);
        const headers: Record<string, string> = {};
        if (header) headers['content-encoding'] = header;
        let url = store ? storePath(projectId) : envelopePath(projectId);
        if (auth === 'good') headers['x-sentry-auth'] = sentryAuth(key);
        else if (auth === 'query') url += `?sentry_key=${key}`;
        else if (auth === 'huge') {
          headers['x-sentry-auth'] = `${sentryAuth(key)}, ${'x'.repeat(64 * 1024)}=y`;
          for (let i = 0; i < 50; i += 1) headers[`x-filler-${i}`] = 'z'.repeat(1000);
        } else if (auth !== 'none') headers['x-sentry-auth'] = auth;
        const res = await t.app.inject({ method: 'POST', url, headers, payload });
        assertClear(
          res,
          `${how} ${auth.slice(0, 20)} ${store ? 'store' : 'envelope'} ${raw.subarray(0, 60).toString('hex')}`,
          [200, 400, 401, 403, 413, 415],
        );
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it('a gzip bomb and an oversized body are 413, a wrong length is 400', async () => {
    const headers = { 'x-sentry-auth': sentryAuth(key) };
    const id = eventId();
    const bomb = gzipSync(
      Buffer.from(envelope({ event_id: id }, [{ type: 'event', payload: { event_id: id, message: 'x'.repeat(20 * 1024 * 1024) } }])),
    );
    assertClear(
      await t.app.inject({
        method: 'POST',
        url: envelopePath(projectId),
        headers: { ...headers, 'content-encoding': 'gzip' },
        payload: bomb,
      }),
      'bomb',
      [413],
    );
    const big = Buffer.alloc(1024 * 1024 + 1, 'a');
    assertClear(await t.app.inject({ method: 'POST', url: envelopePath(projectId), headers, payload: big }), 'big', [413]);
    const incompressible = gzipSync(randomBytes(250 * 1024));
    assertClear(
      await t.app.inject({
        method: 'POST',
        url: envelopePath(projectId),
        headers: { ...headers, 'content-encoding': 'gzip' },
        payload: incompressible,
      }),
      'over 200 KB compressed',
      [413],
    );
    const wrong = `${JSON.stringify({ event_id: id })}\n${JSON.stringify({ type: 'event', length: 9999 })}\n{"message":"short"}\n`;
    assertClear(await t.app.inject({ method: 'POST', url: envelopePath(projectId), headers, payload: wrong }), 'length', [400]);
  });

  it('valid envelopes still answer 200 afterwards', async () => {
    const id = eventId();
    const res = await t.app.inject({
      method: 'POST',
      url: envelopePath(projectId),
      headers: { 'x-sentry-auth': sentryAuth(key) },
      payload: envelope({ event_id: id }, [{ type: 'event', payload: { event_id: id, message: 'still alive' } }]),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().id, id);
  });
});
