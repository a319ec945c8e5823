import { Type } from '@sinclair/typebox';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { RoutePolicy } from '../../infra/auth/index.js';
import type { OpenApiRouteConfig } from '../../infra/http/openapi-schemas.js';
import { MAX_PER_PAGE } from '../../infra/http/pagination.js';
import {
  ERROR_RESPONSES,
  ERROR_SCHEMAS,
  PAGINATION_HEADERS,
  SECURITY_SCHEMES,
  TAG_DESCRIPTIONS,
  errorResponsesOf,
  securityOf,
} from './openapi.components.js';
import { deriveOperationId, deriveTag, disambiguate } from './openapi.naming.js';

interface CollectedRoute {
  method: string;
  url: string;
  schema: RouteOptions['schema'];
  policy: RoutePolicy | undefined;
  openapi: OpenApiRouteConfig | false | undefined;
  page: boolean;
}

type JsonSchema = Record<string, unknown>;

/** The answer of GET /api/v4/openapi.json (served as cached text, so this only describes it). */
export const OpenApiDocument = Type.Object(
  {
    openapi: Type.String(),
    info: Type.Object({ title: Type.String(), version: Type.String() }, { additionalProperties: true }),
    paths: Type.Record(Type.String(), Type.Unknown()),
    components: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: true },
);

/** TypeBox schemas as plain JSON: their symbol keys (Kind) are not part of the document. */
const plain = (schema: unknown): JsonSchema => JSON.parse(JSON.stringify(schema)) as JsonSchema;

/** `:id` path parameters to OpenAPI `{id}`. */
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/**
 * `per_page` is accepted up to its validation bound and clamped to MAX_PER_PAGE (pagination.ts),
 * as the established product's `max_per_page` does: a client never gets more rows than that, so
 * that is the maximum the document declares.
 */
function documentedParameter(name: string, schema: JsonSchema): JsonSchema {
  return name === 'per_page' ? { ...schema, maximum: MAX_PER_PAGE } : schema;
}

function parameters(schema: unknown, where: 'path' | 'query'): JsonSchema[] {
  const object = schema as JsonSchema | undefined;
  const properties = (object?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((object?.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: documentedParameter(name, plain(s)),
  }));
}

/**
 * A `…full_path` parameter of a templated path (the alert receiver's) is a project's path with its
 * slashes, which OpenAPI's path parameters cannot say: the description does.
 */
const spanning = (name: string) =>
  name.endsWith('full_path') ? { description: 'The full path with its slashes, unencoded (group/subgroup/project)' } : {};

/** Every `{name}` of the path is a parameter (OpenAPI requires it), typed by the schema when it has one. */
function pathParameters(path: string, schema: unknown): JsonSchema[] {
  const declared = parameters(schema, 'path');
  return [...path.matchAll(/\{([^}]+)\}/g)].map(
    ([, name = '']) =>
      declared.find((p) => p.name === name) ?? { name, in: 'path', required: true, schema: { type: 'string' }, ...spanning(name) },
  );
}

const SUCCESS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

/** The 2xx answers of `schema.response` (the convention declares only those), as OpenAPI responses. */
function successResponses(response: unknown, paginated: boolean): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [status, schema] of Object.entries((response ?? {}) as Record<string, JsonSchema>)) {
    if (!/^2(\d\d|xx)$/i.test(status)) continue;
    const code = status.toUpperCase();
    const description = (schema.description as string | undefined) ?? SUCCESS[code] ?? 'Success';
    const headers = paginated
      ? { headers: Object.fromEntries(Object.keys(PAGINATION_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }])) }
      : {};
    if ('content' in schema) out[code] = { description, ...plain(schema) };
    else if (status === '204' || schema.type === 'null') out[code] = { description };
    else out[code] = { description, ...headers, content: { 'application/json': { schema: plain(schema) } } };
  }
  return out;
}

/**
 * Collects every route with its schema as it is registered; the document is built from those
 * schemas only, so it cannot drift from what the server validates and serialises.
 */
export class OpenApiCollector {
  private readonly routes: CollectedRoute[] = [];

  attach(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        this.routes.push({
          method: method.toLowerCase(),
          url: route.url,
          schema: route.schema,
          policy: route.config?.policy,
          openapi: route.config?.openapi,
          page: route.config?.page !== undefined,
        });
      }
    });
  }

  /**
   * Routes under /api/v4 unless they opt out; at the root only those that opt in (the OAuth
   * machine endpoints, the alert receiver): the rest are HTML pages, `/-/` probes and git.
   */
  private documented(route: CollectedRoute): boolean {
    if (route.page || route.openapi === false || route.url.includes('*') || route.url.includes('.git')) return false;
    return route.url.startsWith('/api/v4/') || route.openapi !== undefined;
  }

  document(version: string): JsonSchema {
    const entries = this.routes
      .filter((route) => this.documented(route))
      .map((route) => ({ route, path: (route.openapi && route.openapi.path) || toOpenApiPath(route.url) }))
      .sort((a, b) => a.path.localeCompare(b.path) || a.route.method.localeCompare(b.route.method));
    const paths: Record<string, Record<string, JsonSchema>> = {};
    for (const { route, path } of entries) {
      // One templated path for the routes registered per depth: the first stands for all.
      if (paths[path]?.[route.method]) continue;
      (paths[path] ??= {})[route.method] = this.operation(route, path);
    }
    assignOperationIds(paths);
    const tags = [...new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags as string[])))].sort();
    return {
      openapi: '3.1.0',
      info: {
        title: 'Basalt REST API v4 and OAuth 2.0 provider',
        version,
        description: 'Generated from the route schemas (docs/api.md). Error bodies follow DESIGN.md §5.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      tags: tags.map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) })),
      paths,
      components: {
        schemas: ERROR_SCHEMAS,
        responses: ERROR_RESPONSES,
        headers: PAGINATION_HEADERS,
        securitySchemes: SECURITY_SCHEMES,
      },
    };
  }

  private operation(route: CollectedRoute, path: string): JsonSchema {
    const schema = (route.schema ?? {}) as Record<string, unknown>;
    const own = route.openapi || undefined;
    const query = parameters(schema.querystring, 'query');
    const paginated = route.method === 'get' && query.some((p) => p.name === 'page');
    const operation: JsonSchema = {
      ...(typeof schema.operationId === 'string' ? { operationId: schema.operationId } : {}),
      tags: Array.isArray(schema.tags) && schema.tags.length > 0 ? schema.tags : [deriveTag(path)],
      ...(typeof schema.summary === 'string' ? { summary: schema.summary } : {}),
      ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
      parameters: [...pathParameters(path, schema.params), ...query],
    };
    if (schema.body) {
      const body = plain(schema.body);
      const required = Array.isArray(body.required) && body.required.length > 0;
      operation.requestBody = { ...(required ? { required } : {}), content: { 'application/json': { schema: body } } };
    } else if (own?.form) {
      const form = plain(own.form);
      operation.requestBody = {
        required: true,
        content: { 'application/x-www-form-urlencoded': { schema: form }, 'application/json': { schema: form } },
      };
    }
    operation.responses = {
      ...successResponses(schema.response, paginated),
      ...errorResponsesOf({
        policy: route.policy,
        method: route.method,
        path,
        ownKey: own?.security !== undefined,
        oauth: path.startsWith('/oauth/'),
      }),
    };
    operation.security = securityOf(route.policy, route.method, own?.security);
    if (route.policy) operation['x-basalt-policy'] = route.policy;
    return operation;
  }
}

/**
 * Declared operationIds are kept; the others are derived (openapi.naming.ts), and derived names
 * that collide get their path parameters as a suffix. Any id still used twice stops the build.
 */
function assignOperationIds(paths: Record<string, Record<string, JsonSchema>>): void {
  const operations = Object.entries(paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
  const derived = operations.filter((o) => o.op.operationId === undefined);
  const counts = new Map<string, number>();
  for (const o of derived) {
    const id = deriveOperationId(o.method, o.path);
    counts.set(id, (counts.get(id) ?? 0) + 1);
    o.op.operationId = id;
  }
  const declared = new Set(operations.filter((o) => !derived.includes(o)).map((o) => o.op.operationId));
  for (const o of derived) {
    const id = o.op.operationId as string;
    if ((counts.get(id) ?? 0) > 1 || declared.has(id)) o.op.operationId = disambiguate(id, o.path);
  }
  const seen = new Map<string, string>();
  for (const { path, method, op } of operations) {
    const id = op.operationId as string;
    const other = seen.get(id);
    if (other)
      throw new Error(
        `OpenAPI: operationId ${id} is used by ${other} and ${method.toUpperCase()} ${path}; declare a distinct schema.operationId`,
      );
    seen.set(id, `${method.toUpperCase()} ${path}`);
  }
  // Key order: operationId first reads best in the document.
  for (const { op } of operations) {
    const { operationId, ...rest } = op;
    for (const key of Object.keys(op)) delete op[key];
    Object.assign(op, { operationId, ...rest });
  }
}
