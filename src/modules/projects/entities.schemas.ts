import { Type, type Static } from '@sinclair/typebox';
import { IsoDate, Nullable, StringEnum } from '../../infra/http/response-types.js';
import { UserBasicSchema } from '../identity/index.js';

/*
 * Response entities of the projects module (projects.presenter.ts). Fastify serialises each
 * answer with its route's schema (fast-json-stringify), so these are allow-lists: every field a
 * presenter returns is declared here with its real type, or it is dropped from the answer.
 * Presenters are typed with `Static<...>` of these, so the two cannot drift apart. `T | null`
 * and enumerations use response-types.ts (type lists and string enums, which the serialiser
 * writes without a validator: docs/decisions.md "Response schemas written for the serialiser").
 */

export const DateTime = IsoDate;
/** A calendar day, `YYYY-MM-DD`. */
export const Day = Type.String({ format: 'date' });
export const VisibilityValue = StringEnum(['private', 'internal', 'public']);
export type VisibilityValue = Static<typeof VisibilityValue>;

/** `UserBasic` (reference §3.8): identity's schema, as its `mapUserBasic` returns it. */
export const UserBasic = UserBasicSchema;

export const Namespace = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  path: Type.String(),
  kind: StringEnum(['user', 'group']),
  full_path: Type.String(),
  parent_id: Nullable(Type.Integer()),
  avatar_url: Nullable(Type.String()),
  web_url: Type.String(),
});

const AccessOrNull = Nullable(Type.Object({ access_level: Type.Integer() }));

/** `ProjectIdentity`: the fields every project entity starts with, in this order. */
const ProjectIdentityFields = {
  id: Type.Integer(),
  description: Type.String(),
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
  created_at: DateTime,
};
export const ProjectIdentity = Type.Object(ProjectIdentityFields);

/** What both project entities show next: its branch, topics and addresses, in this order. */
const ProjectDetailsFields = {
  default_branch: Type.String(),
  tag_list: Type.Array(Type.String()),
  topics: Type.Array(Type.String()),
  http_url_to_repo: Type.String(),
  web_url: Type.String(),
  readme_url: Nullable(Type.String()),
};

/** `simple=true` on project lists: the established product's `BasicProjectDetails`. */
export const ProjectSimple = Type.Object({
  ...ProjectIdentityFields,
  ...ProjectDetailsFields,
  forks_count: Type.Integer(),
  avatar_url: Nullable(Type.String()),
  star_count: Type.Integer(),
  last_activity_at: DateTime,
  namespace: Nullable(Namespace),
});
export type ProjectSimpleEntity = Static<typeof ProjectSimple>;

/** The project entity, fields in the presenter's order. */
export const Project = Type.Object({
  ...ProjectIdentityFields,
  updated_at: DateTime,
  ...ProjectDetailsFields,
  avatar_url: Nullable(Type.String()),
  forks_count: Type.Integer(),
  star_count: Type.Integer(),
  last_activity_at: DateTime,
  namespace: Nullable(Namespace),
  visibility: VisibilityValue,
  /** Personal projects only. */
  owner: Type.Optional(UserBasic),
  creator_id: Nullable(Type.Integer()),
  archived: Type.Boolean(),
  empty_repo: Type.Boolean(),
  issues_enabled: Type.Boolean(),
  open_issues_count: Type.Integer(),
  /** Administrators only. */
  repository_storage: Type.Optional(Type.String()),
  /** A single project read by a signed-in caller. */
  permissions: Type.Optional(Type.Object({ project_access: AccessOrNull, group_access: AccessOrNull })),
});
export type ProjectEntity = Static<typeof Project>;

/**
 * An item of a project list: a full project, or with `simple=true` the `ProjectSimple` fields
 * only. One object whose other fields are optional rather than a union: fast-json-stringify
 * tries a union's options one by one with a validator, which wrote a page of 100 projects in
 * 1.7 times JSON.stringify's time; this way it takes about half of JSON.stringify's.
 */
export const ProjectListItem = Type.Object({ ...Type.Partial(Project).properties, ...ProjectSimple.properties });
export const ProjectList = Type.Array(ProjectListItem);

export const Group = Type.Object({
  id: Type.Integer(),
  web_url: Type.String(),
  name: Type.String(),
  path: Type.String(),
  description: Type.String(),
  visibility: VisibilityValue,
  full_name: Type.String(),
  full_path: Type.String(),
  parent_id: Nullable(Type.Integer()),
  created_at: DateTime,
  avatar_url: Nullable(Type.String()),
  marked_for_deletion_on: Nullable(Day),
});
export type GroupEntity = Static<typeof Group>;
export const GroupList = Type.Array(Group);

/** A member: the user's `UserBasic` fields and the membership's. */
export const Member = Type.Object({
  ...UserBasic.properties,
  access_level: Type.Integer(),
  created_at: DateTime,
  expires_at: Nullable(Day),
});
export const MemberList = Type.Array(Member);

/** What a deletion scheduled for later answers (202). */
export const Accepted = Type.Object({ message: Type.String() });
