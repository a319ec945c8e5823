import { ALL_SCOPES, acceptedScopes, type RoutePolicy } from '../../infra/auth/index.js';

type JsonSchema = Record<string, unknown>;

const SCOPE_DESCRIPTIONS: Record<(typeof ALL_SCOPES)[number], string> = {
  api: 'Full read and write access to the API',
  read_api: 'Read access to the API',
  read_user: "Read access to the user's profile",
  read_repository: 'Read access to repositories (git clone)',
  write_repository: 'Write access to repositories (git push)',
  sudo: 'Act as another user (administrators)',
  admin_mode: 'Administrator actions when admin mode is on',
  openid: 'OpenID Connect sign-in (ID token)',
  profile: 'OpenID Connect profile claims',
  email: 'OpenID Connect email claims',
};

/**
 * The credentials of reference auth-oauth-common.md §1.1. OAuth 2 has the authorization code
 * grant (PKCE required for public clients: OpenAPI 3.1 has no field for it, so the description
 * says it) and the device grant of RFC 8628, which OpenAPI 3.1 has no flow for: it is given as
 * the `x-deviceAuthorization` extension in the shape OpenAPI 3.2's `deviceAuthorization` flow
 * takes, so a 3.1 tool ignores it and a 3.2 tool reads the same fields (docs/decisions.md).
 */
export const SECURITY_SCHEMES: Record<string, JsonSchema> = {
  privateToken: {
    type: 'apiKey',
    in: 'header',
    name: 'PRIVATE-TOKEN',
    description: 'A personal, project, group or impersonation access token (or an OAuth access token).',
  },
  privateTokenQuery: { type: 'apiKey', in: 'query', name: 'private_token', description: 'The same tokens as a query parameter.' },
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'An OAuth 2 access token, or any token PRIVATE-TOKEN takes, as `Authorization: Bearer`.',
  },
  jobToken: { type: 'apiKey', in: 'header', name: 'JOB-TOKEN', description: 'A running CI job token, on the routes that allow it.' },
  jobTokenQuery: { type: 'apiKey', in: 'query', name: 'job_token', description: 'A running CI job token as a query parameter.' },
  oauth2: {
    type: 'oauth2',
    description:
      'Authorization code grant with PKCE (S256; required for public clients), refresh tokens, and the device authorization grant of RFC 8628 (see `x-deviceAuthorization`: OpenAPI 3.1 has no flow for it).',
    flows: {
      authorizationCode: {
        authorizationUrl: '/oauth/authorize',
        tokenUrl: '/oauth/token',
        refreshUrl: '/oauth/token',
        scopes: SCOPE_DESCRIPTIONS,
      },
      'x-deviceAuthorization': {
        deviceAuthorizationUrl: '/oauth/authorize_device',
        tokenUrl: '/oauth/token',
        grantType: 'urn:ietf:params:oauth:grant-type:device_code',
        scopes: SCOPE_DESCRIPTIONS,
      },
    },
  },
  alertIntegrationToken: {
    type: 'http',
    scheme: 'bearer',
    description: "An alert integration's token (`Authorization: Bearer`, or the password of Basic authentication).",
  },
  sentryKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Sentry-Auth',
    description: "A client key's public key (`sentry_key=` in X-Sentry-Auth, or the `sentry_key` query parameter).",
  },
};

const message = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] };
const oauthError = {
  type: 'object',
  properties: { error: { type: 'string' }, error_description: { type: 'string' }, scope: { type: 'string' } },
  required: ['error'],
};

/** The error bodies of DESIGN.md §5 and SPEC "Errors", shared by every operation. */
export const ERROR_SCHEMAS: Record<string, JsonSchema> = {
  Message: { ...message, description: 'An error with a message, e.g. `{"message":"404 Project Not Found"}`.' },
  BadRequest: {
    type: 'object',
    description:
      'A missing or invalid parameter: `message` is a string naming it, or an object of arrays of messages by attribute (`{"error": …}` for content refused as spam).',
    properties: {
      message: {
        anyOf: [
          { type: 'string' },
          { type: 'object', additionalProperties: { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }] } },
        ],
      },
    },
    required: ['message'],
  },
  OAuthError: { ...oauthError, description: 'RFC 6749 §5.2 / RFC 6750 §3.1 error.' },
  Conflict: {
    type: 'object',
    description: 'A conflict: a name or path taken, or content held as spam until a CAPTCHA is solved.',
    properties: {
      message: { anyOf: [{ type: 'string' }, { type: 'object', properties: { error: { type: 'string' } } }] },
      needs_captcha_response: { type: 'boolean' },
      spam_log_id: { type: 'integer' },
      captcha_site_key: { type: 'string' },
    },
    required: ['message'],
  },
  RateLimited: {
    type: 'object',
    properties: { message: { anyOf: [{ type: 'string' }, { type: 'object', properties: { error: { type: 'string' } } }] } },
    required: ['message'],
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const retryAfter = { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } };

export const ERROR_RESPONSES: Record<string, JsonSchema> = {
  BadRequest: { description: 'Bad request', content: json(ref('BadRequest')) },
  Unauthorized: {
    description: 'No valid credential: `{"message":"401 Unauthorized"}`, or `invalid_token` for an expired or revoked token.',
    content: json({ anyOf: [ref('Message'), ref('OAuthError')] }),
  },
  Forbidden: {
    description: 'The caller may see the resource but not do this, or the token lacks the scope (`insufficient_scope`).',
    content: json({ anyOf: [ref('Message'), ref('OAuthError')] }),
  },
  NotFound: { description: 'Not found, or not visible to the caller', content: json(ref('Message')) },
  Conflict: { description: 'Conflict with the current state (a name or path taken, or spam)', content: json(ref('Conflict')) },
  Unprocessable: { description: 'The request cannot be applied in the current state', content: json(ref('Message')) },
  TooManyRequests: {
    description: 'Rate limited',
    headers: { 'Retry-After': retryAfter },
    content: json(ref('RateLimited')),
  },
  OAuthError: { description: 'OAuth error', content: json(ref('OAuthError')) },
};

/** The areas of the convention (issue 19), described for readers of the document. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  users: 'Users, the current user, blocking',
  tokens: 'Personal, impersonation, project and group access tokens',
  groups: 'Groups and their subgroups and projects',
  projects: 'Projects',
  members: 'Members of projects and groups',
  issues: 'Issues and their notes',
  snippets: 'Personal and project snippets',
  jobs: 'CI jobs and their job tokens',
  events: 'Activity events',
  notifications: 'Notification settings',
  alerts: 'Alerts, alert integrations and the alert receiver',
  error_tracking: 'Error tracking: errors, events, client keys and the Sentry collector',
  webhooks: 'Project and group webhooks and their test deliveries',
  repository_storage_moves: 'Moves of repositories between storages',
  applications: 'OAuth applications (administrators)',
  oauth: 'OAuth 2.0 and OpenID Connect provider',
  operations: 'The OpenAPI document',
  metadata: 'Version and metadata of the instance',
};

/** The pagination headers of DESIGN.md §5, on every list. */
export const PAGINATION_HEADERS: Record<string, JsonSchema> = Object.fromEntries(
  ['X-Total', 'X-Total-Pages', 'X-Page', 'X-Per-Page', 'X-Next-Page', 'X-Prev-Page', 'Link'].map((name) => [
    name,
    { schema: { type: 'string' }, description: name === 'Link' ? 'RFC 8288 links: prev, next, first, last' : undefined },
  ]),
);

const TOKEN_SCHEMES = ['privateToken', 'privateTokenQuery', 'bearer'];

/**
 * `security` of an operation from its route policy: `none` takes no credential (or its own key),
 * `optional` also serves anonymous callers (`{}`), `required` needs one. A token needs any one of
 * the accepted scopes; OpenAPI lists the scopes of one requirement as all required, so each
 * accepted scope is a requirement of its own.
 */
export function securityOf(policy: RoutePolicy | undefined, method: string, own: readonly string[] | undefined): JsonSchema[] {
  if (own) return own.map((name) => ({ [name]: [] }));
  if (!policy || policy.auth === 'none') return [];
  const schemes = [...TOKEN_SCHEMES, ...(policy.jobToken ? ['jobToken', 'jobTokenQuery'] : [])];
  const requirements: JsonSchema[] = [
    ...schemes.map((name) => ({ [name]: [] })),
    ...acceptedScopes(policy, method.toUpperCase()).map((scope) => ({ oauth2: [scope] })),
  ];
  return policy.auth === 'optional' ? [{}, ...requirements] : requirements;
}

interface ErrorContext {
  readonly policy: RoutePolicy | undefined;
  readonly method: string;
  readonly path: string;
  readonly ownKey: boolean;
  readonly oauth: boolean;
}

/** The shared error answers that can apply to an operation (OpenAPI: at least those it lists). */
export function errorResponsesOf({ policy, method, path, ownKey, oauth }: ErrorContext): Record<string, JsonSchema> {
  const use = (name: string) => ({ $ref: `#/components/responses/${name}` });
  // The limiter's 429 keeps the API's body on the OAuth endpoints too (errors/handlers.ts).
  if (oauth) return { 400: use('OAuthError'), 401: use('OAuthError'), 429: use('TooManyRequests') };
  const authenticated = policy !== undefined && policy.auth !== 'none';
  const write = method !== 'get';
  const out: Record<string, JsonSchema> = { 400: use('BadRequest') };
  if (authenticated || ownKey) out[401] = use('Unauthorized');
  if (authenticated || ownKey || policy?.admin) out[403] = use('Forbidden');
  // Any authenticated request may name a Sudo user that does not exist (404).
  if (path.includes('{') || ownKey || authenticated) out[404] = use('NotFound');
  if (authenticated && write) {
    out[409] = use('Conflict');
    out[422] = use('Unprocessable');
  }
  if (authenticated || ownKey || policy?.rateLimit) out[429] = use('TooManyRequests');
  return out;
}
