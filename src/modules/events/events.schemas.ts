import { Type, type Static } from '@sinclair/typebox';
import { PUSH_ACTIONS, REF_TYPES } from '../../infra/bus.js';
import { NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';
import { IsoDate as DateTime, Nullable, StringEnum } from '../../infra/http/response-types.js';
import { UserBasic } from '../projects/index.js';
import { ACTIONS, TARGET_TYPES } from './events.actions.js';

const text = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

// Values are checked by the service so that a bad one answers "<name> does not have a valid
// value" / "<name> is invalid" like reference §2.2, with the `message` key of SPEC "Errors".
const filters = {
  action: text(Object.keys(ACTIONS).join(', ')),
  target_type: text(Object.keys(TARGET_TYPES).join(', ')),
  before: text('YYYY-MM-DD: events created before this day began'),
  after: text('YYYY-MM-DD: events created after this day ended'),
  sort: text('asc or desc (by id), default desc'),
  ...PaginationQuery,
};

export const OwnEventsQuery = Type.Object({ ...filters, scope: text('`all`: every event of the projects you are a member of') });
export const EventsListQuery = Type.Object(filters);
export const UserParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });
export const ProjectParams = Type.Object({ id: NamespaceOrProjectId });

// Response entity (events.presenter.ts). Fastify serialises each answer with it, so it is an
// allow-list: every field the presenter returns is here, in the presenter's order.

/** The note embedded in note events (reference §2.8). */
const EventNote = Type.Object({
  id: Type.Integer(),
  type: Nullable(Type.String()),
  body: Type.String(),
  attachment: Nullable(Type.String()),
  author: Nullable(UserBasic),
  created_at: Nullable(DateTime),
  updated_at: Nullable(DateTime),
  system: Type.Boolean(),
  noteable_id: Type.Integer(),
  noteable_type: Type.String(),
  project_id: Nullable(Type.Integer()),
  resolvable: Type.Boolean(),
  confidential: Type.Boolean(),
  internal: Type.Boolean(),
  imported: Type.Boolean(),
  imported_from: Type.String(),
  /** Project lists only (SPEC). */
  noteable_iid: Type.Optional(Nullable(Type.Integer())),
  /** Always set; optional only to stay after `noteable_iid` (see `Event`). */
  commands_changes: Type.Optional(Type.Object({})),
});

const PushData = Type.Object({
  commit_count: Type.Integer(),
  action: StringEnum(PUSH_ACTIONS),
  ref_type: StringEnum(REF_TYPES),
  commit_from: Nullable(Type.String()),
  commit_to: Nullable(Type.String()),
  ref: Nullable(Type.String()),
  commit_title: Nullable(Type.String()),
  ref_count: Nullable(Type.Integer()),
});

/**
 * Activity event (SPEC "Activity event"), fields in the order of reference §2.4. fast-json-stringify
 * writes required fields before optional ones, so the fields after the first optional one are
 * declared optional too (the presenter always sets them): the order is the spec's, not the
 * serialiser's (docs/decisions.md "Response schemas").
 */
export const Event = Type.Object({
  id: Type.Integer(),
  title: Type.Null(),
  project_id: Nullable(Type.Integer()),
  action_name: Type.String(),
  target_id: Nullable(Type.Integer()),
  target_iid: Nullable(Type.Integer()),
  target_type: Nullable(Type.String()),
  author_id: Type.Integer(),
  target_title: Nullable(Type.String()),
  created_at: DateTime,
  /** Note events only. */
  note: Type.Optional(EventNote),
  /** Absent only if the author's row is gone. */
  author: Type.Optional(UserBasic),
  imported: Type.Optional(Type.Boolean()),
  imported_from: Type.Optional(Type.String()),
  /** Push events only. */
  push_data: Type.Optional(PushData),
  author_username: Type.Optional(Nullable(Type.String())),
  /** Project lists only. */
  data: Type.Optional(Type.Null()),
});
export type EventEntity = Static<typeof Event>;
export type EventNoteEntity = Static<typeof EventNote>;
export const EventList = Type.Array(Event);
