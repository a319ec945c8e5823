// Not in the PostgreSQL tier: rules over every route (authorization, roles, request and answer forms), decided in code above the database.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import Fastify, { type FastifySchema } from 'fastify';
import { OpenApiCollector } from '../../src/modules/operations/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** The OpenAPI document a generator reads (issue 19 item 6), as GET /api/v4/openapi.json serves it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking the JSON of a document
type Json = Record<string, any>;

let t: TestApp;
let doc: Json;
let operations: { path: string; method: string; op: Json }[];
before(async () => {
  t = await createTestApp();
  doc = (await t.api('GET', '/api/v4/openapi.json', { token: null })).json();
  operations = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
});
after(() => t.close());

/** Every `$ref` of the document, to check that it resolves. */
function refs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, out));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (Redocly: structure, unique operationIds, declared path parameters)', async () => {
    const config = await createConfig({ extends: ['minimal'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
    assert.deepEqual(errors, []);
  });

  it('declares the security schemes: PRIVATE-TOKEN header and query, bearer, JOB-TOKEN and OAuth 2 with the device grant', () => {
    const schemes = doc.components.securitySchemes;
    assert.deepEqual(schemes.privateToken, { ...schemes.privateToken, type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' });
    assert.deepEqual(schemes.privateTokenQuery, { ...schemes.privateTokenQuery, type: 'apiKey', in: 'query', name: 'private_token' });
    assert.equal(schemes.bearer.scheme, 'bearer');
    assert.equal(schemes.jobToken.name, 'JOB-TOKEN');
    const code = schemes.oauth2.flows.authorizationCode;
    assert.equal(code.authorizationUrl, '/oauth/authorize');
    assert.equal(code.tokenUrl, '/oauth/token');
    assert.ok(code.scopes.api && code.scopes.read_api && code.scopes.openid);
    assert.equal(schemes.oauth2.flows['x-deviceAuthorization'].deviceAuthorizationUrl, '/oauth/authorize_device');
    assert.match(schemes.oauth2.description, /PKCE/);
  });

  it("derives each operation's security from its route policy", () => {
    const op = (path: string, method: string) => doc.paths[path][method];
    // optional: anonymous callers too ({}); required: a credential; a token needs any one scope.
    assert.deepEqual(op('/api/v4/projects', 'get').security[0], {});
    assert.ok(op('/api/v4/projects', 'get').security.some((s: Json) => s.oauth2?.[0] === 'read_api'));
    assert.ok(!op('/api/v4/projects', 'post').security.some((s: Json) => Object.keys(s).length === 0));
    assert.ok(!op('/api/v4/projects', 'post').security.some((s: Json) => s.oauth2?.[0] === 'read_api'));
    assert.ok(op('/api/v4/job', 'get').security.some((s: Json) => 'jobToken' in s));
    assert.ok(!op('/api/v4/projects', 'get').security.some((s: Json) => 'jobToken' in s));
    assert.deepEqual(op('/oauth/token/info', 'get').security, [{ bearer: [] }]);
  });

  it('gives every operation a unique operationId and a tag', () => {
    assert.ok(operations.length > 100, `${operations.length} operations`);
    const ids = operations.map((o) => o.op.operationId);
    assert.ok(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id)),
      ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(String(id))).join(', '),
    );
    assert.deepEqual(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
    );
    assert.deepEqual(
      operations.filter((o) => !(o.op.tags?.length > 0)).map((o) => `${o.method} ${o.path}`),
      [],
    );
    assert.equal(doc.paths['/api/v4/projects/{id}/issues'].get.operationId, 'listProjectIssues');
    assert.equal(doc.paths['/api/v4/users/{id}/block'].post.operationId, 'blockUser');
  });

  it('tells colliding derived operationIds apart, and refuses an id used twice', async () => {
    const app = Fastify();
    const collector = new OpenApiCollector();
    collector.attach(app);
    app.get('/api/v4/user', async () => ({}));
    app.get('/api/v4/users/:id', async () => ({}));
    // FastifySchema's type does not name operationId (OpenAPI's); Fastify keeps it on the route.
    const same = { operationId: 'same' } as FastifySchema;
    app.get('/api/v4/a', { schema: same }, async () => ({}));
    await app.ready();
    const paths = collector.document('test').paths as Record<string, Json>;
    assert.equal(paths['/api/v4/user']?.get.operationId, 'getUser');
    assert.equal(paths['/api/v4/users/{id}']?.get.operationId, 'getUserById');
    await app.close();

    const twice = Fastify();
    const refusing = new OpenApiCollector();
    refusing.attach(twice);
    twice.get('/api/v4/a', { schema: same }, async () => ({}));
    twice.get('/api/v4/b', { schema: same }, async () => ({}));
    await twice.ready();
    assert.throws(() => refusing.document('test'), /operationId same is used by GET \/api\/v4\/a and GET \/api\/v4\/b/);
    await twice.close();
  });

  it('lists the shared error answers, 429 with Retry-After, by $ref that resolve', async () => {
    const get = doc.paths['/api/v4/projects/{id}'].get.responses;
    for (const status of ['400', '401', '403', '404', '429']) assert.ok(get[status]?.$ref, `GET /projects/{id} lacks ${status}`);
    assert.ok(doc.paths['/api/v4/projects'].post.responses['409']);
    // Sudo to a user that does not exist is 404 on any authenticated route.
    assert.ok(doc.paths['/api/v4/projects'].get.responses['404']);
    const sudo = await t.api('GET', '/projects', { headers: { sudo: 'nobody-at-all' } });
    assert.equal(sudo.statusCode, 404);
    assert.ok(doc.components.responses.TooManyRequests.headers['Retry-After']);
    assert.deepEqual(doc.components.schemas.Message.required, ['message']);
    for (const ref of new Set(refs(doc))) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], doc);
      assert.ok(target, `${ref} does not resolve`);
    }
    // OpenAPI requires every templated path parameter to be declared.
    for (const { path, method, op } of operations) {
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        assert.ok(
          op.parameters.some((p: Json) => p.in === 'path' && p.name === name),
          `${method} ${path} does not declare ${name}`,
        );
      }
    }
  });

  it('documents the alert receiver as one templated path per kind, not one per depth', () => {
    const notify = Object.keys(doc.paths).filter((p) => p.includes('/notify'));
    assert.deepEqual(notify.sort(), [
      '/{project_full_path}/alerts/notify/{name}/{endpoint_identifier}',
      '/{project_full_path}/prometheus/alerts/notify',
    ]);
    assert.ok(Object.keys(doc.paths).every((p) => !/\{p\d+\}/.test(p)));
  });

  it('leaves HTML pages out', async () => {
    const paths = Object.keys(doc.paths);
    for (const page of ['/users/sign_in', '/users/sign_out', '/profile', '/oauth/authorize', '/oauth/device', '/oauth/device/confirm']) {
      assert.ok(!paths.includes(page), `${page} is documented`);
    }
    assert.deepEqual(
      paths.filter((p) => p.startsWith('/-/') || p.startsWith('/user_settings') || p.startsWith('/admin')),
      [],
    );
    // Whatever is documented and answers a plain GET answers JSON, never a page.
    for (const { path, method } of operations) {
      if (method !== 'get' || path.includes('{')) continue;
      const res = await t.app.inject({ method: 'GET', url: path });
      assert.doesNotMatch(String(res.headers['content-type']), /html/, `${path} answers HTML`);
    }
  });

  it("declares per_page's maximum as the 100 the server clamps to", async () => {
    const perPage = operations.flatMap((o) => (o.op.parameters as Json[]).filter((p) => p.name === 'per_page'));
    assert.ok(perPage.length >= 30, `${perPage.length} lists`);
    assert.deepEqual(perPage.filter((p) => p.schema.maximum !== 100).length, 0);
    const res = await t.api('GET', '/projects?per_page=250');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-per-page'], '100');
    assert.ok(doc.paths['/api/v4/projects'].get.parameters.some((p: Json) => p.name === 'per_page'));
  });

  it('documents the form bodies of /oauth/token, /oauth/revoke and /oauth/authorize_device', () => {
    const token = doc.paths['/oauth/token'].post.requestBody.content;
    assert.deepEqual(token['application/x-www-form-urlencoded'].schema.required, ['grant_type']);
    assert.ok(token['application/x-www-form-urlencoded'].schema.properties.code_verifier);
    assert.ok(token['application/json'], 'JSON bodies of the same strings are accepted too');
    assert.deepEqual(doc.paths['/oauth/revoke'].post.requestBody.content['application/x-www-form-urlencoded'].schema.required, ['token']);
    assert.ok(doc.paths['/oauth/authorize_device'].post.requestBody.content['application/x-www-form-urlencoded'].schema.properties.scope);
    assert.ok(doc.paths['/oauth/token'].post.responses['400'], 'OAuth errors');
  });
});
