import { Type, type Static } from '@sinclair/typebox';
import { INTEGRATION_TYPES } from '../../infra/db/tables/alerts.js';
import { IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';
import {
  AnyJson,
  IsoDate,
  JsonObject,
  Nullable,
  NullableInteger,
  NullableIsoDate,
  NullableJsonObject,
  NullableString,
  StringEnum,
} from '../../infra/http/response-types.js';
import { ALERT_SORTS, ALERT_STATUSES } from './alerts.repository.js';
import { SEVERITIES } from './normalize-common.rules.js';
import { GENERIC_KEYS } from './normalize-generic.rules.js';

/** Largest alert payload and sample, and deepest nesting (reference A4). */
export const PAYLOAD_LIMIT_BYTES = 1024 * 1024;
export const PAYLOAD_MAX_DEPTH = 100;

export const ProjectParams = Type.Object({ id: NamespaceOrProjectId });
export const IntegrationParams = Type.Object({ id: NamespaceOrProjectId, integration_id: IntegerId });
/** An alert's iid is a 32-bit column (migration 0004): a larger value names no alert, and PostgreSQL would refuse it with an error. */
export const MAX_ALERT_IID = 2_147_483_647;
export const AlertParams = Type.Object({ id: NamespaceOrProjectId, alert_iid: Type.Integer({ minimum: 1, maximum: MAX_ALERT_IID }) });

const Mapping = Type.Object({
  field_name: Type.String({ minLength: 1, maxLength: 100 }),
  // Integer and null branches first: ajv's coercion tries the branches in order and changes the
  // value in the first that can take it, so a String branch first would store 0 as "0" and null as "".
  path: Type.Array(Type.Union([Type.Integer({ minimum: 0, maximum: 100_000 }), Type.String({ maxLength: 255 })]), {
    minItems: 1,
    maxItems: 20,
  }),
  type: Type.String({ minLength: 1, maxLength: 20 }),
  label: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 255 })])),
});
export type MappingInput = Static<typeof Mapping>;

const Mappings = Type.Array(Mapping, { maxItems: 20 });
/** A JSON document as text, as the sample-payload field of the established product takes it. */
const PayloadExample = Type.Union([Type.String({ maxLength: PAYLOAD_LIMIT_BYTES }), Type.Null()]);

export const ListIntegrationsQuery = Type.Object({ ...PaginationQuery });

export const CreateIntegrationBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  type: Type.Optional(Type.Union(INTEGRATION_TYPES.map((t) => Type.Literal(t)))),
  active: Type.Optional(Type.Boolean()),
  payload_example: Type.Optional(PayloadExample),
  payload_attribute_mappings: Type.Optional(Mappings),
});
export type CreateIntegrationInput = Static<typeof CreateIntegrationBody>;

export const UpdateIntegrationBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  active: Type.Optional(Type.Boolean()),
  payload_example: Type.Optional(PayloadExample),
  payload_attribute_mappings: Type.Optional(Mappings),
});
export type UpdateIntegrationInput = Static<typeof UpdateIntegrationBody>;

export const StatusValue = Type.Union(ALERT_STATUSES.map((s) => Type.Literal(s)));
const SeverityValue = Type.Union(SEVERITIES.map((s) => Type.Literal(s)));

export const ListAlertsQuery = Type.Object({
  status: Type.Optional(Type.Union([StatusValue, Type.Array(StatusValue, { maxItems: 4 })])),
  severity: Type.Optional(Type.Union([SeverityValue, Type.Array(SeverityValue, { maxItems: 6 })])),
  // Clients of the established API send lists as `status[]=a&status[]=b`.
  'status[]': Type.Optional(Type.Array(StatusValue, { maxItems: 4 })),
  'severity[]': Type.Optional(Type.Array(SeverityValue, { maxItems: 6 })),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  sort: Type.Optional(Type.Union(ALERT_SORTS.map((s) => Type.Literal(s)))),
  ...PaginationQuery,
});

export const UpdateAlertBody = Type.Object({ status: StatusValue });

export const SettingsBody = Type.Object({
  create_issue: Type.Optional(Type.Boolean()),
  auto_close_incident: Type.Optional(Type.Boolean()),
  send_email: Type.Optional(Type.Boolean()),
});
export type SettingsInput = Static<typeof SettingsBody>;

/*
 * Response schemas: allow-lists that Fastify serialises the answers with (fast-json-stringify),
 * one field for each field of alerts.presenter.ts, with its type and nullability.
 */

const IntegrationType = StringEnum(INTEGRATION_TYPES);

/** A stored custom mapping (mappings.rules.ts `checkMappings`): a path item is a key or an array index. */
const MappingOut = Type.Object({
  field_name: StringEnum(GENERIC_KEYS),
  path: Type.Array(Type.Unsafe<string | number>({ type: ['string', 'integer'] })),
  type: StringEnum(['string', 'datetime', 'array', 'number']),
  label: Type.Optional(NullableString),
});

export const Integration = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  type: IntegrationType,
  active: Type.Boolean(),
  endpoint_identifier: Type.String(),
  url: Type.String({ description: 'Where the integration receives alerts' }),
  // The sample as the client gave it: written whole.
  payload_example: NullableJsonObject,
  payload_attribute_mappings: Type.Array(MappingOut),
  created_at: IsoDate,
  updated_at: IsoDate,
  token: Type.Optional(Type.String({ description: 'The key: only in the answers to create and reset_token' })),
});
export const IntegrationList = Type.Array(Integration);

export const Alert = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: NullableString,
  status: StringEnum(ALERT_STATUSES),
  severity: StringEnum(SEVERITIES),
  service: NullableString,
  monitoring_tool: NullableString,
  hosts: Type.Array(Type.String()),
  started_at: IsoDate,
  ended_at: NullableIsoDate,
  event_count: Type.Integer(),
  fingerprint: NullableString,
  environment_name: NullableString,
  runbook: NullableString,
  full_query: NullableString,
  y_label: NullableString,
  incident_markdown: NullableString,
  issue_iid: NullableInteger,
  issue_id: NullableInteger,
  integration: Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), type: IntegrationType })),
  // Values the client's payload holds at the mapped paths, and the payload itself: written whole.
  custom_fields: JsonObject,
  payload: AnyJson,
  details_url: Type.String(),
  created_at: IsoDate,
  updated_at: IsoDate,
});
export const AlertList = Type.Array(Alert);

export const Settings = Type.Object({
  create_issue: Type.Boolean(),
  auto_close_incident: Type.Boolean(),
  send_email: Type.Boolean(),
});

/** What the receiver and a test alert answer: each alert the request created, grouped or resolved. */
export const AlertSummaries = Type.Array(Type.Object({ iid: Type.Integer(), title: Type.String() }));
