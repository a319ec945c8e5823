import { Type } from '@sinclair/typebox';
import { IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';
import { ERROR_STATUSES } from '../../infra/db/tables/error-tracking.js';
import { AnyJson, IsoDate, Nullable, NullableInteger, NullableString, Pair, StringEnum } from '../../infra/http/response-types.js';
import { ERROR_SORTS } from './errors.repository.js';

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
  /** Basalt's own: whether new and regressed errors mail the project's maintainers (default true). */
  email_notifications: Type.Optional(Type.Boolean()),
});

export const Status = Type.Union(ERROR_STATUSES.map((s) => Type.Literal(s)));
export const Sort = Type.Union(ERROR_SORTS.map((s) => Type.Literal(s)));

export const ListErrorsQuery = Type.Object({
  ...PaginationQuery,
  status: Type.Optional(Status),
  search: Type.Optional(Type.String({ maxLength: 255 })),
  sort: Type.Optional(Sort),
});

export const PaginationOnly = Type.Object({ ...PaginationQuery });

export const UpdateErrorBody = Type.Object({ status: Status });

export const ReleaseHealthQuery = Type.Object({
  ...PaginationQuery,
  days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 30 })),
});

/*
 * Response schemas: allow-lists that Fastify serialises the answers with (fast-json-stringify),
 * one field for each field of errors.presenter.ts, with its type and nullability.
 */

/** SPEC "Error tracking settings": the external-tracker fields are always null with the integrated backend. */
export const Settings = Type.Object({
  active: Type.Boolean(),
  project_name: NullableString,
  tracker_external_url: NullableString,
  api_url: NullableString,
  integrated: Type.Boolean(),
  /** Whether new and regressed errors mail the project's maintainers and owners. */
  email_notifications: Type.Boolean(),
});

/** SPEC "Client key". */
export const ClientKey = Type.Object({
  id: Type.Integer(),
  active: Type.Boolean(),
  public_key: Type.String(),
  tracker_dsn: Type.String(),
});
export const ClientKeyList = Type.Array(ClientKey);

const errorFields = {
  id: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  type: Type.String(),
  message: Type.String(),
  culprit: Type.String(),
  platform: Type.String(),
  status: StringEnum(ERROR_STATUSES),
  count: Type.Integer(),
  user_count: Type.Integer(),
  first_seen: IsoDate,
  last_seen: IsoDate,
  issue_iid: NullableInteger,
  web_url: Type.String(),
};
export const TrackedError = Type.Object(errorFields);
export const ErrorList = Type.Array(TrackedError);

const eventFields = {
  event_id: Type.String(),
  error_id: Type.Integer(),
  occurred_at: IsoDate,
  received_at: IsoDate,
  level: Type.String(),
  environment: NullableString,
  release: NullableString,
  user: NullableString,
  message: Type.String(),
};
/** An event with the SDK's whole event JSON (contexts, tags, `extra`…), written as stored. */
export const Event = Type.Object({ ...eventFields, payload: AnyJson });
export const EventList = Type.Array(Event);

/** `[hour start, events in that hour]`. */
const Bucket = Pair(IsoDate, Type.Integer());

const StackFrame = Type.Object({
  filename: NullableString,
  function: NullableString,
  module: NullableString,
  lineno: NullableInteger,
  colno: NullableInteger,
  in_app: Type.Boolean(),
  /** `[line number, source line]` pairs around the frame. */
  context: Type.Array(Pair(Type.Integer(), Type.String())),
});

export const ErrorDetails = Type.Object({
  ...errorFields,
  frequency: Type.Object({ '24h': Type.Array(Bucket), '30d': Type.Array(Bucket) }),
  latest_event: Nullable(Type.Object(eventFields)),
  stack_trace: Nullable(Type.Object({ type: NullableString, value: NullableString, frames: Type.Array(StackFrame) })),
});

export const ReleaseHealth = Type.Object({
  release: Type.String(),
  environment: Type.String(),
  sessions: Type.Integer(),
  exited: Type.Integer(),
  errored: Type.Integer(),
  crashed: Type.Integer(),
  abnormal: Type.Integer(),
  crash_free_rate: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
});
export const ReleaseHealthList = Type.Array(ReleaseHealth);

/** The collector's answer: the stored event's id; `{}` for an envelope without an event (sessions only). */
export const CollectorAnswer = Type.Object({ id: Type.Optional(Type.String()) });
