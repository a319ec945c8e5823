import { Type } from '@sinclair/typebox';
import { ALL_SCOPES, API_SCOPES } from '../../infra/auth/index.js';
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
