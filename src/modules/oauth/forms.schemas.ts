import { Type } from '@sinclair/typebox';
import { DEVICE_CODE_GRANT } from './oauth.defaults.js';

/**
 * The form bodies of the OAuth endpoints, for the OpenAPI document only: the endpoints read
 * their parameters themselves (params.ts: a repeated parameter is an error, RFC 6749 §3.2), so
 * these are never given to Fastify as body schemas. JSON objects of the same strings are accepted.
 */
const client = {
  client_id: Type.Optional(Type.String({ description: 'The application id (or HTTP Basic authentication)' })),
  client_secret: Type.Optional(Type.String({ description: 'Confidential clients (or HTTP Basic authentication)' })),
};

export const TokenForm = Type.Object(
  {
    grant_type: Type.Union([Type.Literal('authorization_code'), Type.Literal('refresh_token'), Type.Literal(DEVICE_CODE_GRANT)]),
    code: Type.Optional(Type.String({ description: 'authorization_code' })),
    redirect_uri: Type.Optional(Type.String({ description: 'authorization_code: the URI the code was issued for' })),
    code_verifier: Type.Optional(Type.String({ minLength: 43, maxLength: 128, description: 'authorization_code with PKCE' })),
    refresh_token: Type.Optional(Type.String({ description: 'refresh_token' })),
    scope: Type.Optional(Type.String({ description: 'refresh_token: a narrower set of the granted scopes, space-separated' })),
    device_code: Type.Optional(Type.String({ description: 'device_code' })),
    ...client,
  },
  { description: 'RFC 6749 §4.1.3 and §6, RFC 8628 §3.4' },
);

export const RevokeForm = Type.Object(
  {
    token: Type.String({ description: 'An access or refresh token of this client' }),
    token_type_hint: Type.Optional(Type.Union([Type.Literal('access_token'), Type.Literal('refresh_token')])),
    ...client,
  },
  { description: 'RFC 7009 §2.1' },
);

export const IntrospectForm = Type.Object(
  {
    token: Type.String(),
    token_type_hint: Type.Optional(Type.Union([Type.Literal('access_token'), Type.Literal('refresh_token')])),
    ...client,
  },
  { description: 'RFC 7662 §2.1' },
);

export const AuthorizeDeviceForm = Type.Object(
  { scope: Type.Optional(Type.String({ description: 'Space-separated scopes' })), ...client },
  { description: 'RFC 8628 §3.1' },
);
