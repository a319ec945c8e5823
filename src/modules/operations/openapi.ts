import type { FastifyInstance, RouteOptions } from 'fastify';

interface CollectedRoute {
  method: string;
  url: string;
  schema: RouteOptions['schema'];
  policy: unknown;
}

type JsonSchema = Record<string, unknown>;

/** `:id` path parameters to OpenAPI `{id}`. */
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function parameters(schema: JsonSchema | undefined, where: 'path' | 'query'): JsonSchema[] {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({ name, in: where, required: where === 'path' || required.has(name), schema: s }));
}

/**
 * Collects every route with its schema as it is registered; the document is built from
 * those schemas only, so it cannot drift from what the server validates.
 */
export class OpenApiCollector {
  private readonly routes: CollectedRoute[] = [];

  attach(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        if (method === 'HEAD' || method === 'OPTIONS') continue;
        this.routes.push({ method: method.toLowerCase(), url: route.url, schema: route.schema, policy: route.config?.policy });
      }
    });
  }

  document(version: string): JsonSchema {
    const paths: Record<string, Record<string, JsonSchema>> = {};
    const sorted = [...this.routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method));
    for (const route of sorted) {
      // Wildcards and git's smart-HTTP routes (one per path depth) are documented in docs/api.md.
      if (route.url.includes('*') || route.url.includes('.git')) continue;
      const schema = (route.schema ?? {}) as Record<string, JsonSchema | undefined>;
      const operation: JsonSchema = {
        parameters: [...parameters(schema.params, 'path'), ...parameters(schema.querystring, 'query')],
        responses: { default: { description: 'See docs/api.md and SPEC.md for the response shapes and error bodies.' } },
      };
      if (schema.body) operation.requestBody = { content: { 'application/json': { schema: schema.body } } };
      const policy = route.policy as { auth?: string; scopes?: string[]; admin?: boolean } | undefined;
      if (policy) operation['x-basalt-policy'] = policy;
      (paths[toOpenApiPath(route.url)] ??= {})[route.method] = operation;
    }
    return {
      openapi: '3.1.0',
      info: { title: 'Basalt REST API v4 and OAuth 2.0 provider', version },
      servers: [{ url: '/' }],
      paths,
    };
  }
}
