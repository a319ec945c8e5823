import { Type, type Static } from '@sinclair/typebox';
import { IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';
import { IsoDate } from '../../infra/http/response-types.js';
import { INSTANCE_SCOPE } from '../../infra/audit.js';

const Timestamp = Type.String({ maxLength: 64, description: 'ISO 8601, e.g. 2026-01-31T12:00:00Z' });

export const ListQuery = Type.Object({
  ...PaginationQuery,
  created_after: Type.Optional(Timestamp),
  created_before: Type.Optional(Timestamp),
});
export const InstanceListQuery = Type.Object({
  ...ListQuery.properties,
  entity_type: Type.Optional(
    Type.Union([Type.Literal('User'), Type.Literal('Group'), Type.Literal('Project'), Type.Literal(INSTANCE_SCOPE)]),
  ),
  entity_id: Type.Optional(IntegerId),
});
export type InstanceListQueryType = Static<typeof InstanceListQuery>;

export const EventParams = Type.Object({ audit_event_id: IntegerId });
export const ScopedParams = Type.Object({ id: NamespaceOrProjectId });
export const ScopedEventParams = Type.Object({ id: NamespaceOrProjectId, audit_event_id: IntegerId });

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null(), Type.Array(Type.String())]);

/** The established product's audit event: the facts it records sit in `details`. */
export const AuditEvent = Type.Object({
  id: Type.Integer(),
  author_id: Type.Integer(),
  entity_id: Type.Integer(),
  entity_type: Type.String(),
  event_name: Type.String(),
  details: Type.Object(
    {
      author_name: Type.String(),
      target_id: Type.Union([Type.Integer(), Type.String(), Type.Null()]),
      target_type: Type.Union([Type.String(), Type.Null()]),
      target_details: Type.Union([Type.String(), Type.Null()]),
      ip_address: Type.Union([Type.String(), Type.Null()]),
      entity_path: Type.Union([Type.String(), Type.Null()]),
    },
    { additionalProperties: Scalar },
  ),
  created_at: IsoDate,
});
export const AuditEventList = Type.Array(AuditEvent);
