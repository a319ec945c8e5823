import { Type } from '@sinclair/typebox';
import { ALL_SCOPES, API_SCOPES } from '../../infra/auth/index.js';
import { Nullable } from '../../infra/http/response-types.js';
import { IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';

const NullableBoolean = Type.Union([Type.Boolean(), Type.Null()]);

export const UserIdParams = Type.Object({ id: IntegerId });
export const UserIdOrNameParams = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 255 }) });
export const TokenIdParams = Type.Object({ id: Type.Union([IntegerId, Type.Literal('self')]) });

export const ListUsersQuery = Type.Object({
  ...PaginationQuery,
  username: Type.Optional(Type.String({ maxLength: 255 })),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  active: Type.Optional(Type.Boolean()),
  blocked: Type.Optional(Type.Boolean()),
  humans: Type.Optional(Type.Boolean()),
});

export const CreateUserBody = Type.Object({
  username: Type.String({ maxLength: 255 }),
  name: Type.String({ maxLength: 255 }),
  email: Type.String({ maxLength: 255 }),
  password: Type.Optional(Type.String({ maxLength: 128 })),
  reset_password: Type.Optional(Type.Boolean()),
  admin: Type.Optional(Type.Boolean()),
  bio: Type.Optional(Type.String({ maxLength: 65_536 })),
  private_profile: Type.Optional(NullableBoolean),
  skip_confirmation: Type.Optional(Type.Boolean()),
});

export const UpdateUserBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255 })),
  email: Type.Optional(Type.String({ maxLength: 255 })),
  password: Type.Optional(Type.String({ maxLength: 128 })),
  admin: Type.Optional(Type.Boolean()),
  bio: Type.Optional(Type.String({ maxLength: 65_536 })),
  public_email: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
  private_profile: Type.Optional(NullableBoolean),
});

const ScopeList = Type.Array(Type.Union(API_SCOPES.map((s) => Type.Literal(s))), { maxItems: ALL_SCOPES.length * 2 });

export const CreateTokenBody = Type.Object({
  name: Type.String({ maxLength: 255 }),
  scopes: ScopeList,
  expires_at: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  description: Type.Optional(Type.String({ maxLength: 1024 })),
});

export const RotateTokenBody = Type.Object({
  expires_at: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
});

export const ListTokensQuery = Type.Object({
  ...PaginationQuery,
  user_id: Type.Optional(IntegerId),
  state: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('inactive')])),
});

export const ImpersonationListQuery = Type.Object({
  ...PaginationQuery,
  state: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('active'), Type.Literal('inactive')])),
});

export const ImpersonationParams = Type.Object({ user_id: IntegerId, token_id: IntegerId });
export const UserTokenParams = Type.Object({ user_id: IntegerId });

export const ResourceParams = Type.Object({ id: NamespaceOrProjectId });
export const ResourceTokenParams = Type.Object({ id: NamespaceOrProjectId, token_id: IntegerId });
export const CreateResourceTokenBody = Type.Object({
  name: Type.String({ maxLength: 255 }),
  scopes: ScopeList,
  access_level: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  expires_at: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  description: Type.Optional(Type.String({ maxLength: 1024 })),
});
export const ResourceTokenListQuery = Type.Object({
  ...PaginationQuery,
  state: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('inactive')])),
});

// Response entities (identity.presenter.ts). Fastify serialises each answer with them, so they
// are allow-lists: every field the presenter returns is here, with its real type. Nullable
// fields use infra/http/response-types.ts: GET /user is a hot path.
const DateTime = Type.String({ format: 'date-time' });
const NullableDateTime = Nullable(DateTime);
const NullableString = Nullable(Type.String());
const NullableDay = Nullable(Type.String({ format: 'date' }));

/** `UserBasic` (reference §3.8). */
export const UserBasic = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  name: Type.String(),
  state: Type.String(),
  locked: Type.Boolean(),
  avatar_url: NullableString,
  web_url: Type.String(),
});

/** `User`: a private profile the viewer may not read has no `created_at`, `followers`, `following`. */
export const User = Type.Object({
  ...UserBasic.properties,
  created_at: Type.Optional(DateTime),
  bio: Type.String(),
  location: Type.String(),
  public_email: Type.String(),
  skype: Type.String(),
  linkedin: Type.String(),
  twitter: Type.String(),
  discord: Type.String(),
  website_url: Type.String(),
  organization: Type.String(),
  job_title: Type.String(),
  pronouns: NullableString,
  bot: Type.Boolean(),
  work_information: NullableString,
  followers: Type.Optional(Type.Integer()),
  following: Type.Optional(Type.Integer()),
  local_time: NullableString,
});

const PublicFields = {
  last_sign_in_at: NullableDateTime,
  confirmed_at: NullableDateTime,
  last_activity_on: NullableDay,
  email: Type.String(),
  theme_id: Type.Integer(),
  color_scheme_id: Type.Integer(),
  projects_limit: Type.Integer(),
  current_sign_in_at: NullableDateTime,
  identities: Type.Array(Type.Object({ provider: Type.String(), extern_uid: Type.String() })),
  can_create_group: Type.Boolean(),
  can_create_project: Type.Boolean(),
  two_factor_enabled: Type.Boolean(),
  external: Type.Boolean(),
  private_profile: Type.Boolean(),
  commit_email: Type.String(),
};
const AdminFields = { is_admin: Type.Boolean(), note: NullableString };

/**
 * `UserPublic`: what a user sees of themselves, their profile always readable. `created_at`,
 * `followers` and `following` are required here, in place: fast-json-stringify writes optional
 * fields after the required ones, and these keep the presenter's order.
 */
export const UserPublic = Type.Object({
  ...User.properties,
  created_at: DateTime,
  followers: Type.Integer(),
  following: Type.Integer(),
  ...PublicFields,
});
/** `UserWithAdmin`: what an administrator sees of anyone. */
export const UserWithAdmin = Type.Object({ ...UserPublic.properties, ...AdminFields });
/**
 * `GET /user`: `UserPublic`, with `is_admin` and `note` for an administrator. One object with
 * two optional fields rather than a union: a union is tried option by option when serialised.
 */
export const CurrentUser = Type.Object({
  ...UserPublic.properties,
  is_admin: Type.Optional(AdminFields.is_admin),
  note: Type.Optional(AdminFields.note),
});
const {
  id: _id,
  username: _username,
  name: _name,
  state: _state,
  locked: _locked,
  avatar_url: _avatar,
  web_url: _web,
  ...beyondBasic
} = UserWithAdmin.properties;
/**
 * A user at whichever level the viewer may see: `UserBasic`'s fields, then every other field of
 * `UserWithAdmin`, optional (`User` for others, `UserPublic` for oneself, `UserWithAdmin` for
 * administrators). One object rather than `anyOf` the levels: fast-json-stringify tries each
 * branch with a validator per row, and an administrator's page of 100 users took 1.6 times as
 * long as JSON.stringify; this way it is faster, and the fields keep the presenter's order.
 */
export const UserAtAnyLevel = Type.Object(
  { ...UserBasic.properties, ...Type.Partial(Type.Object(beyondBasic)).properties },
  {
    description:
      'A user as the caller may see them: UserBasic in lists for non-administrators, User for another user (a private profile without created_at, followers, following), UserPublic for oneself, UserWithAdmin for administrators.',
  },
);
/** `GET /users/:id`. */
export const AnyUser = UserAtAnyLevel;
/** `GET /users`: administrators get `UserWithAdmin`, others `UserBasic`. */
export const UserList = Type.Array(UserAtAnyLevel);

/** Personal, impersonation, project and group access tokens (`mapToken`). */
export const AccessToken = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  revoked: Type.Boolean(),
  created_at: DateTime,
  scopes: Type.Array(Type.String()),
  user_id: Type.Integer(),
  last_used_at: NullableDateTime,
  active: Type.Boolean(),
  expires_at: NullableDay,
  /** Impersonation tokens only. */
  impersonation: Type.Optional(Type.Boolean()),
  /** Project and group access tokens only. */
  access_level: Type.Optional(Type.Integer()),
});
/** A token as created or rotated: its secret, shown this once. */
export const AccessTokenWithSecret = Type.Object({ ...AccessToken.properties, token: Type.String() });
export const AccessTokenList = Type.Array(AccessToken);
/** A project or group access token, which always has its level. */
export const ResourceAccessToken = Type.Object({ ...AccessToken.properties, access_level: Type.Integer() });
export const ResourceAccessTokenWithSecret = Type.Object({ ...ResourceAccessToken.properties, token: Type.String() });
