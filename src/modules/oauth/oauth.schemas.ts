import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../infra/http/response-types.js';
import { IntegerId, PaginationQuery } from '../../infra/http/index.js';

/** Reference §2.10: `POST /applications` (admin API). */
export const CreateApplicationBody = Type.Object({
  name: Type.String({ maxLength: 255 }),
  redirect_uri: Type.String({ maxLength: 21_000 }),
  scopes: Type.String({ maxLength: 1000 }),
  confidential: Type.Optional(Type.Boolean({ default: true })),
});

export const ListApplicationsQuery = Type.Object({ ...PaginationQuery });

export const ApplicationIdParams = Type.Object({ id: IntegerId });

export const ApplicationEntity = Type.Object({
  id: Type.Integer(),
  application_id: Type.String(),
  application_name: Type.String(),
  callback_url: Type.String(),
  confidential: Type.Boolean(),
});

export const ApplicationWithSecretEntity = Type.Object({
  ...ApplicationEntity.properties,
  secret: Type.String(),
});

// Answers of the OAuth and OpenID Connect endpoints (oauth.presenter.ts, oidc.service.ts,
// device.service.ts, keys.service.ts). Fastify serialises each with its schema, so they are
// allow-lists; an optional field a grant leaves out stays out of the answer.

/**
 * RFC 6749 §5.1 (SPEC "Token response"). fast-json-stringify writes the required fields first,
 * then the optional ones present: the same fields and values as before, keys in another order.
 */
export const TokenResponse = Type.Object({
  access_token: Type.String(),
  /** `bearer` for the authorization code and refresh grants, `Bearer` for the device grant. */
  token_type: StringEnum(['bearer', 'Bearer']),
  expires_in: Type.Integer(),
  refresh_token: Type.Optional(Type.String()),
  /** Device grant only. */
  scope: Type.Optional(Type.String()),
  /** Unix time, seconds. */
  created_at: Type.Integer(),
  /** When `openid` was granted (OIDC Core §3.1.3.3). */
  id_token: Type.Optional(Type.String()),
});

/** RFC 7009 §2.2: an empty object, whether or not the token was known. */
export const RevokeResponse = Type.Object({});

/** RFC 7662 §2.2: `{active: false}`, or the active token's description. */
export const IntrospectionResponse = Type.Object({
  active: Type.Boolean(),
  scope: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  /** Access tokens only. */
  username: Type.Optional(Type.String()),
  token_type: Type.Optional(StringEnum(['Bearer', 'refresh_token'])),
  /** Access tokens that expire only. */
  exp: Type.Optional(Type.Integer()),
  iat: Type.Optional(Type.Integer()),
  sub: Type.Optional(Type.String()),
});

const NullableSeconds = Nullable(Type.Integer());

/** SPEC "Token information", with the deprecated aliases `scopes` and `expires_in_seconds` (rule 8). */
export const TokenInfo = Type.Object({
  resource_owner_id: Type.Integer(),
  scope: Type.Array(Type.String()),
  /** Seconds left; null for a token that does not expire. */
  expires_in: NullableSeconds,
  application: Type.Object({ uid: Type.String() }),
  /** Unix time, seconds. */
  created_at: Type.Integer(),
  /** Deprecated alias of `scope`. */
  scopes: Type.Array(Type.String(), { deprecated: true }),
  /** Deprecated alias of `expires_in`. */
  expires_in_seconds: Nullable(Type.Integer({ deprecated: true })),
});

/** OIDC Core §5.3.2 (reference §2.8); `email` and `email_verified` only when there is an address to show. */
export const UserInfo = Type.Object({
  sub: Type.String(),
  name: Type.String(),
  nickname: Type.String(),
  preferred_username: Type.String(),
  profile: Type.String(),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(Type.Boolean()),
});

/** RFC 8628 §3.2. */
export const DeviceAuthorizationResponse = Type.Object({
  device_code: Type.String(),
  user_code: Type.String(),
  verification_uri: Type.String(),
  verification_uri_complete: Type.String(),
  expires_in: Type.Integer(),
  interval: Type.Integer(),
});

const Strings = Type.Array(Type.String());

/** OIDC Discovery 1.0 §3 / RFC 8414 §2. */
export const DiscoveryDocument = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  introspection_endpoint: Type.String(),
  userinfo_endpoint: Type.String(),
  jwks_uri: Type.String(),
  device_authorization_endpoint: Type.String(),
  scopes_supported: Strings,
  response_types_supported: Strings,
  response_modes_supported: Strings,
  grant_types_supported: Strings,
  token_endpoint_auth_methods_supported: Strings,
  revocation_endpoint_auth_methods_supported: Strings,
  introspection_endpoint_auth_methods_supported: Strings,
  subject_types_supported: Strings,
  id_token_signing_alg_values_supported: Strings,
  claim_types_supported: Strings,
  claims_supported: Strings,
  code_challenge_methods_supported: Strings,
  authorization_response_iss_parameter_supported: Type.Boolean(),
});

/** RFC 7517 §5: the RS256 public keys that sign id_tokens. */
export const JsonWebKeySet = Type.Object({
  keys: Type.Array(
    Type.Object({
      kty: Type.String(),
      n: Type.String(),
      e: Type.String(),
      kid: Type.String(),
      use: Type.String(),
      alg: Type.String(),
    }),
  ),
});
