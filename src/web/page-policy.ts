import type { Actor } from '../infra/auth/index.js';

/**
 * What a page route declares in its route config (`config: { page: ... }`), as API routes
 * declare `policy`. One hook of the page layer (page-layer.ts) decides it, through the same
 * access rules as the API (the ports below), before the handler runs.
 */
export interface PagePolicy {
  /** `required`: a visitor who is not signed in is sent to the sign-in page and back. */
  readonly signIn: 'required' | 'optional';
  /** The least access level on the project named by the `project` parameter (0: may see it). */
  readonly project?: number;
  /** The least access level on the group named by the `group` parameter (0: may see it). */
  readonly group?: number;
  /** Administrators only. */
  readonly admin?: boolean;
  /**
   * A form page: on a body that fails its schema, `render` draws the form again with what was
   * typed and each field's message beside it (status 400), instead of an error page.
   */
  readonly form?: FormRenderer;
}

/** Messages by form field name (the body's property), one each. */
export type FieldErrors = Readonly<Record<string, string>>;

export type FormRenderer = (
  request: import('fastify').FastifyRequest,
  input: Record<string, unknown>,
  errors: FieldErrors,
) => Promise<preact.VNode> | preact.VNode;

/** A project or group the policy resolved, with the caller's access level on it. */
export interface PageResource<T = unknown> {
  readonly row: T;
  readonly level: number;
}

/** What the page layer knows of a request by the time its handler runs. */
export interface PageState {
  readonly actor: Actor | null;
  /** The CSRF token for every form of the page, bound to the session. */
  readonly csrf: string;
  readonly project: PageResource | null;
  readonly group: PageResource | null;
  /** A message carried over a redirect (flash.ts), shown once. */
  readonly flash: Flash | null;
}

export interface Flash {
  readonly kind: 'notice' | 'error';
  readonly text: string;
}

/**
 * The page layer's ports: what it asks of the identity and projects modules, given by the
 * app when it assembles them (src/web imports no module, as src/infra does not).
 */
export interface PagePorts {
  currentUser(request: import('fastify').FastifyRequest): Promise<Actor | null>;
  csrfToken(request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply): string;
  verifyCsrf(request: import('fastify').FastifyRequest): boolean;
  /** The project named `ref`, readable by `request.actor` at `minLevel` (throws the API's 404/403/301). */
  project(request: import('fastify').FastifyRequest, ref: string, minLevel: number): Promise<PageResource>;
  group(request: import('fastify').FastifyRequest, ref: string, minLevel: number): Promise<PageResource>;
  /** The HMAC key for flash cookies. */
  readonly secretKeyBase: string;
  readonly externalUrl: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    page?: PagePolicy;
  }
  interface FastifyRequest {
    page: PageState;
  }
}
