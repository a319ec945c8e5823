// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createTestApp, ROOT_TOKEN, type TestApp } from '../helpers/app.js';
import { hostileBody as body, hostileQuery as query, hostileSegment } from '../helpers/hostile.js';

/**
 * Hostile input against every route of the OpenAPI document: path and query injection,
 * random, truncated, deeply nested and wrongly typed bodies, odd encodings. No answer may be
 * a 5xx, and every error answer must be JSON with the spec's body. FUZZ_RUNS raises the
 * number of cases (`npm run fuzz`); CI runs a bounded number.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 4);

// Routes that would lock the fuzzer out of the rest of the run (blocking root, revoking its token).
const EXCLUDED = [/\/block$/, /\/unblock$/, /personal_access_tokens/, /impersonation_tokens/, /openapi\.json$/];

describe('hostile input on every OpenAPI route', () => {
  let t: TestApp;
  let routes: { method: string; path: string }[] = [];
  before(async () => {
    t = await createTestApp();
    const doc = (await t.api('GET', '/api/v4/openapi.json')).json<{ paths: Record<string, Record<string, unknown>> }>();
    routes = Object.entries(doc.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })))
      .filter((r) => r.path.startsWith('/api/v4/') && !EXCLUDED.some((x) => x.test(r.path)));
  });
  after(() => t.close());

  it('never answers 5xx and every error is a JSON body of the spec', async () => {
    assert.ok(routes.length > 20, `only ${routes.length} routes found`);
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(fc.array(hostileSegment, { minLength: 3, maxLength: 3 }), query, body, async (segments, params, input) => {
          let i = 0;
          const path = route.path.replace(/\{[^}]+\}/g, () => segments[i++ % segments.length] ?? '1');
          const qs = params.map(([k, v]) => `${k}=${v}`).join('&');
          const res = await t.app.inject({
            method: route.method as 'GET',
            url: qs ? `${path}?${qs}` : path,
            headers: {
              'private-token': ROOT_TOKEN,
              'content-type': input.type,
              ...('encoding' in input ? { 'content-encoding': input.encoding } : {}),
            },
            ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: input.payload }),
          });
          assert.ok(res.statusCode < 500, `${route.method} ${path}?${qs} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
          if (res.statusCode >= 400) {
            const parsed = res.json<Record<string, unknown>>();
            assert.ok(
              'message' in parsed || 'error' in parsed,
              `${route.method} ${path} answered ${res.statusCode} without message: ${res.body.slice(0, 200)}`,
            );
          }
        }),
        { numRuns: RUNS },
      );
    }
  });

  it('still serves normally afterwards', async () => {
    const res = await t.api('GET', '/user');
    assert.equal(res.statusCode, 200);
  });
});
