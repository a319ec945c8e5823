import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimit } from '../../config/index.js';
import { bearerToken } from '../../infra/auth/index.js';
import { allowCors, answerPreflight, type CorsRule, type RateLimiter } from '../../infra/http/index.js';
import { authenticateClient, readClientCredentials } from './client-auth.service.js';
import { CORS } from './cors.rules.js';
import type { DeviceService } from './device.service.js';
import type { SigningKeys } from './keys.service.js';
import { AuthorizeDeviceForm, IntrospectForm, RevokeForm, TokenForm } from './forms.schemas.js';
import { mapTokenInfo } from './oauth.presenter.js';
import type { AccessTokenRow, OAuthStorage } from './oauth.storage.js';
import type { OidcService } from './oidc.service.js';
import * as S from './oauth.schemas.js';
import { readParams, requireParam } from './params.rules.js';
import { tokenEndpoint, type TokenEndpointDeps } from './token-endpoint.service.js';
import type { OAuthTokens } from './tokens.service.js';

export interface OAuthRouteDeps extends TokenEndpointDeps {
  storage: OAuthStorage;
  tokens: OAuthTokens;
  device: DeviceService;
  oidc: OidcService;
  keys: SigningKeys;
  limiter: RateLimiter;
  /** RATE_LIMITS `oauth`: requests per client IP to the endpoints anyone may call. */
  limit: RateLimit | undefined;
}

// Machine endpoints: in the OpenAPI document (root routes are left out unless they say so).
const NONE = { policy: { auth: 'none' }, openapi: {} } as const;
const form = (schema: TSchema) => ({ ...NONE, openapi: { form: schema } });
/** The endpoints an OAuth access token is presented to. */
const BEARER = { ...NONE, openapi: { security: ['bearer'] } };
const FORM_LIMIT = 64 * 1024;
const tags = ['oauth'];

/** RFC 6749 §5.1: token-endpoint-like answers are never cached. */
const noStore = (reply: FastifyReply): FastifyReply => reply.header('cache-control', 'no-store').header('pragma', 'no-cache');

/** RFC 6750 §2: the access token from `Authorization: Bearer`, else the `access_token` parameter. */
function accessTokenOf(request: FastifyRequest): string | undefined {
  const fromHeader = bearerToken(request);
  if (fromHeader !== undefined) return fromHeader;
  return readParams(request.query, request.method === 'POST' ? (request.body ?? {}) : undefined).get('access_token');
}

function preflight(app: FastifyInstance, path: string, rule: CorsRule): void {
  app.options(path, { config: NONE }, async (request, reply) => answerPreflight(request, reply, rule));
}

/**
 * The machine endpoints under `/oauth` and `/.well-known` (SPEC "OAuth 2.0 endpoints"),
 * inside the encapsulated plugin whose error handler renders `{error, error_description}`.
 */
export function oauthRoutes(app: FastifyInstance, deps: OAuthRouteDeps): void {
  const { tokens, device, oidc, keys, limiter, limit } = deps;
  // The endpoints an anonymous caller can make work or write rows with (a device grant needs
  // only a public client's id). The hook is left out when no limit is set: nothing to pay then.
  const limited = limit ? { onRequest: async (request: FastifyRequest) => limiter.enforce('oauth', `ip:${request.ip}`, limit) } : {};

  /** The form's parameters and the client they authenticate (RFC 6749 §2.3), for revoke, introspect and device. */
  const authenticatedForm = async (request: FastifyRequest) => {
    const params = readParams(request.body ?? {});
    return { params, application: await authenticateClient(deps.storage, readClientCredentials(request, params)) };
  };

  /**
   * A POST endpoint taking a form (rate-limited, in the document with the form's schema). With a
   * CORS rule it answers preflights and adds the CORS headers; device authorization has none.
   */
  const formEndpoint = (
    path: string,
    cors: CorsRule | null,
    schema: { summary: string; operationId: string; response: { 200: TSchema } },
    body: TSchema,
    handler: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>,
  ): void => {
    if (cors) preflight(app, path, cors);
    const options = { schema: { ...schema, tags }, config: form(body), bodyLimit: FORM_LIMIT, ...limited };
    app.post(path, options, async (request, reply) => {
      if (cors) allowCors(request, reply, cors);
      return handler(request, reply);
    });
  };

  const token = { summary: 'Exchanges a grant for an access token', operationId: 'requestOauthToken', response: { 200: S.TokenResponse } };
  formEndpoint('/oauth/token', CORS.token, token, TokenForm, async (request, reply) => {
    return noStore(reply).send(await tokenEndpoint(deps, request));
  });

  const revoke = { summary: 'Revokes an access or refresh token', operationId: 'revokeOauthToken', response: { 200: S.RevokeResponse } };
  formEndpoint('/oauth/revoke', CORS.token, revoke, RevokeForm, async (request, reply) => {
    const { params, application } = await authenticatedForm(request);
    await tokens.revoke(application, requireParam(params, 'token'), request.ip);
    return noStore(reply).send({});
  });

  const introspect = {
    summary: 'Describes a token to the client it was issued to',
    operationId: 'introspectOauthToken',
    response: { 200: S.IntrospectionResponse },
  };
  formEndpoint('/oauth/introspect', CORS.token, introspect, IntrospectForm, async (request, reply) => {
    const { params, application } = await authenticatedForm(request);
    return noStore(reply).send(await tokens.introspect(application, requireParam(params, 'token')));
  });

  preflight(app, '/oauth/token/info', CORS.tokenInfo);
  // A found token's row lives a few seconds in the tokens' cache; its answer is built once per
  // row and second of `expires_in`, so a resource server checking one token again and again gets
  // the same bytes without redoing them (as GET /api/v4/user does for its caller).
  const infoBodies = new WeakMap<AccessTokenRow, { expiresIn: number | null; json: string }>();
  const info = { summary: 'Shows the access token presented', tags, response: { 200: S.TokenInfo } };
  app.get('/oauth/token/info', { schema: info, config: BEARER }, async (request, reply) => {
    allowCors(request, reply, CORS.tokenInfo);
    const token = await tokens.require(accessTokenOf(request));
    const expiresIn = tokens.expiresIn(token.token);
    let body = infoBodies.get(token.token);
    if (body?.expiresIn !== expiresIn) {
      // Serialised with the route's response schema (fast-json-stringify), as any answer is.
      const json = reply.serialize(mapTokenInfo(token.token, token.applicationUid, expiresIn)) as string;
      body = { expiresIn, json };
      infoBodies.set(token.token, body);
    }
    return noStore(reply).type('application/json; charset=utf-8').send(body.json);
  });

  preflight(app, '/oauth/userinfo', CORS.userinfo);
  const userinfo = async (request: FastifyRequest, reply: FastifyReply) => {
    allowCors(request, reply, CORS.userinfo);
    const token = await tokens.require(accessTokenOf(request));
    return noStore(reply).send(await oidc.userinfo(token));
  };
  const claims = { summary: "Shows the OpenID Connect claims of the token's user", tags, response: { 200: S.UserInfo } };
  app.get('/oauth/userinfo', { schema: { ...claims, operationId: 'getOauthUserinfo' }, config: BEARER }, userinfo);
  app.post('/oauth/userinfo', { schema: { ...claims, operationId: 'postOauthUserinfo' }, config: BEARER, bodyLimit: FORM_LIMIT }, userinfo);

  const authorizeDevice = {
    summary: 'Starts a device authorization',
    operationId: 'authorizeOauthDevice',
    response: { 200: S.DeviceAuthorizationResponse },
  };
  formEndpoint('/oauth/authorize_device', null, authorizeDevice, AuthorizeDeviceForm, async (request, reply) => {
    const { params, application } = await authenticatedForm(request);
    return noStore(reply).send(await device.authorize(application, params.get('scope')));
  });

  preflight(app, '/.well-known/openid-configuration', CORS.discovery);
  const discovery = async (request: FastifyRequest, reply: FastifyReply) => {
    allowCors(request, reply, CORS.discovery);
    return reply.header('cache-control', 'public, max-age=3600').send(oidc.discovery());
  };
  const metadata = { summary: "Describes the provider's endpoints and capabilities", tags, response: { 200: S.DiscoveryDocument } };
  const openid = { ...metadata, operationId: 'getOpenidConfiguration' };
  app.get('/.well-known/openid-configuration', { schema: openid, config: NONE }, discovery);
  const rfc8414 = { ...metadata, operationId: 'getOauthAuthorizationServerMetadata' };
  app.get('/.well-known/oauth-authorization-server', { schema: rfc8414, config: NONE }, discovery);

  preflight(app, '/oauth/discovery/keys', CORS.discovery);
  const jwks = {
    summary: 'Lists the public keys that sign id_tokens',
    operationId: 'getOauthJwks',
    tags,
    response: { 200: S.JsonWebKeySet },
  };
  app.get('/oauth/discovery/keys', { schema: jwks, config: NONE }, async (request, reply) => {
    allowCors(request, reply, CORS.discovery);
    return reply.header('cache-control', 'public, max-age=3600').send(await keys.jwks());
  });
}
