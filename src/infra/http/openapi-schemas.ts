import { Type, type TSchema } from '@sinclair/typebox';

/**
 * What a route tells the OpenAPI document beyond its schema (modules/operations/openapi.service.ts,
 * docs/decisions.md "OpenAPI document"). Routes under /api/v4 are documented unless they say
 * `openapi: false` or a page policy (`page`); a route at the root is documented only when it carries this
 * object, since most of those are HTML pages.
 */
export interface OpenApiRouteConfig {
  /**
   * The path the document shows instead of the registered one, in OpenAPI's `{name}` form: for
   * routes registered once per path depth (the alert receiver), which share one templated path.
   */
  readonly path?: string;
  /**
   * The request body of a route that reads its parameters itself rather than through a body
   * schema (the OAuth endpoints, which must see repeated parameters, RFC 6749 §3.2): documented
   * as a form and as JSON, not validated by Fastify.
   */
  readonly form?: TSchema;
  /** Security schemes of a door with its own key (components/securitySchemes names). */
  readonly security?: readonly string[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` leaves the route out of the OpenAPI document; an object documents it (see OpenApiRouteConfig). */
    openapi?: OpenApiRouteConfig | false;
  }
}

/** `204 No Content`: `response: { 204: NoContent }`. */
export const NoContent = Type.Null({ description: 'No Content' });
