import { Type } from '@sinclair/typebox';
import { IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';

export const RefParams = Type.Object({ id: NamespaceOrProjectId });
export const KeyParams = Type.Object({ id: NamespaceOrProjectId, key_id: IntegerId });
export const ErrorParams = Type.Object({ id: NamespaceOrProjectId, error_id: IntegerId });

/**
 * `active` and `integrated` may come in the query string (gitbeaker sends them so, with an
 * empty JSON body) or in the body; the route merges them and names a missing one.
 */
export const SettingsFields = Type.Object({
  active: Type.Optional(Type.Boolean()),
  integrated: Type.Optional(Type.Boolean()),
});

export const Status = Type.Union([Type.Literal('unresolved'), Type.Literal('resolved'), Type.Literal('ignored')]);

export const ListErrorsQuery = Type.Object({
  ...PaginationQuery,
  status: Type.Optional(Status),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  sort: Type.Optional(Type.Union([Type.Literal('last_seen'), Type.Literal('first_seen'), Type.Literal('frequency')])),
});

export const PaginationOnly = Type.Object({ ...PaginationQuery });

export const UpdateErrorBody = Type.Object({ status: Status });

export const ReleaseHealthQuery = Type.Object({
  ...PaginationQuery,
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30 })),
});
