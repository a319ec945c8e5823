import { Type } from '@sinclair/typebox';
import { AT_LEAST_ONE_OF, IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';

const Visibility = Type.Union([Type.Literal('private'), Type.Literal('internal'), Type.Literal('public')]);
const Sort = Type.Union([Type.Literal('asc'), Type.Literal('desc')]);
const AccessLevelValue = Type.Integer({ minimum: 0, maximum: 100 });
const DateString = Type.Union([Type.String({ maxLength: 32 }), Type.Null()]);

export const RefParams = Type.Object({ id: NamespaceOrProjectId });
export const MemberParams = Type.Object({ id: NamespaceOrProjectId, user_id: IntegerId });
export const IssueParams = Type.Object({ id: NamespaceOrProjectId, issue_iid: IntegerId });
export const NoteParams = Type.Object({ id: NamespaceOrProjectId, issue_iid: IntegerId, note_id: IntegerId });
export const SnippetParams = Type.Object({ id: IntegerId });
export const ProjectSnippetParams = Type.Object({ id: NamespaceOrProjectId, snippet_id: IntegerId });

export const CreateGroupBody = Type.Object({
  name: Type.String({ maxLength: 255 }),
  path: Type.Optional(Type.String({ maxLength: 255 })),
  parent_id: Type.Optional(Type.Union([IntegerId, Type.Null()])),
  visibility: Type.Optional(Visibility),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
});

export const UpdateGroupBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255 })),
  path: Type.Optional(Type.String({ maxLength: 255 })),
  visibility: Type.Optional(Visibility),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
});

const groupListFilters = {
  ...PaginationQuery,
  search: Type.Optional(Type.String({ maxLength: 255 })),
  owned: Type.Optional(Type.Boolean()),
  all_available: Type.Optional(Type.Boolean()),
};
export const ListGroupsQuery = Type.Object({ ...groupListFilters, top_level_only: Type.Optional(Type.Boolean()) });
export const ListSubgroupsQuery = Type.Object(groupListFilters);

export const CreateProjectBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 255 })),
    path: Type.Optional(Type.String({ maxLength: 255 })),
    namespace_id: Type.Optional(IntegerId),
    visibility: Type.Optional(Visibility),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    default_branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    initialize_with_readme: Type.Optional(Type.Boolean()),
  },
  { [AT_LEAST_ONE_OF]: ['name', 'path'] },
);

const projectUpdates = {
  name: Type.Optional(Type.String({ maxLength: 255 })),
  path: Type.Optional(Type.String({ maxLength: 255 })),
  visibility: Type.Optional(Visibility),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  default_branch: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
};
// Grape `at_least_one_of` over the attributes an update takes: an empty update is a 400.
export const UpdateProjectBody = Type.Object(projectUpdates, { [AT_LEAST_ONE_OF]: Object.keys(projectUpdates) });

export const ListProjectsQuery = Type.Object({
  ...PaginationQuery,
  search: Type.Optional(Type.String({ maxLength: 255 })),
  visibility: Type.Optional(Visibility),
  repository_storage: Type.Optional(Type.String({ maxLength: 255 })),
  membership: Type.Optional(Type.Boolean()),
  owned: Type.Optional(Type.Boolean()),
  simple: Type.Optional(Type.Boolean()),
  order_by: Type.Optional(
    Type.Union([
      Type.Literal('id'),
      Type.Literal('name'),
      Type.Literal('path'),
      Type.Literal('created_at'),
      Type.Literal('updated_at'),
      Type.Literal('last_activity_at'),
    ]),
  ),
  sort: Type.Optional(Sort),
});

export const AddMemberBody = Type.Object({
  user_id: IntegerId,
  access_level: AccessLevelValue,
  expires_at: Type.Optional(DateString),
});

export const UpdateMemberBody = Type.Object({
  access_level: AccessLevelValue,
  expires_at: Type.Optional(DateString),
});

/** Assignees and due date on create and update (the established product's names; `0` or `[]` unassigns). */
const issuePlanning = {
  assignee_id: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()])),
  assignee_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), { maxItems: 100 })),
  due_date: Type.Optional(Type.Union([Type.String({ maxLength: 32, description: 'YYYY-MM-DD; empty clears it' }), Type.Null()])),
};

export const CreateIssueBody = Type.Object({
  title: Type.String({ maxLength: 1024 }),
  description: Type.Optional(Type.String({ maxLength: 1_048_576 })),
  issue_type: Type.Optional(Type.Union([Type.Literal('issue'), Type.Literal('incident')])),
  confidential: Type.Optional(Type.Boolean()),
  ...issuePlanning,
});

const issueUpdates = {
  title: Type.Optional(Type.String({ maxLength: 1024 })),
  description: Type.Optional(Type.String({ maxLength: 1_048_576 })),
  state_event: Type.Optional(Type.Union([Type.Literal('close'), Type.Literal('reopen')])),
  issue_type: Type.Optional(Type.Union([Type.Literal('issue'), Type.Literal('incident')])),
  confidential: Type.Optional(Type.Boolean()),
  ...issuePlanning,
};
export const UpdateIssueBody = Type.Object(issueUpdates, { [AT_LEAST_ONE_OF]: Object.keys(issueUpdates) });

export const ListIssuesQuery = Type.Object({
  ...PaginationQuery,
  state: Type.Optional(Type.Union([Type.Literal('opened'), Type.Literal('closed'), Type.Literal('all')])),
  // Each character is matched against titles and description heads of every issue: kept short.
  search: Type.Optional(Type.String({ maxLength: 100 })),
  issue_type: Type.Optional(Type.Union([Type.Literal('issue'), Type.Literal('incident')])),
  author_id: Type.Optional(IntegerId),
  iids: Type.Optional(Type.Array(IntegerId, { maxItems: 100 })),
  assignee_id: Type.Optional(
    Type.String({ maxLength: 20, pattern: '^([0-9]+|[Nn][Oo][Nn][Ee]|[Aa][Nn][Yy])$', description: 'A user id, `None` or `Any`' }),
  ),
  assignee_username: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 10 })),
  due_date: Type.Optional(
    Type.Union(
      ['0', 'any', 'today', 'tomorrow', 'overdue', 'week', 'month', 'next_month_and_previous_two_weeks', ''].map((v) => Type.Literal(v)),
    ),
  ),
  order_by: Type.Optional(Type.Union([Type.Literal('created_at'), Type.Literal('updated_at')])),
  sort: Type.Optional(Sort),
});

export const NoteBody = Type.Object({ body: Type.String({ maxLength: 1_000_000 }) });
export const ListNotesQuery = Type.Object({ ...PaginationQuery, sort: Type.Optional(Sort) });

export const CreateSnippetBody = Type.Object({
  title: Type.String({ maxLength: 1024 }),
  file_name: Type.Optional(Type.String({ maxLength: 255 })),
  content: Type.Optional(Type.String({ maxLength: 1_048_576 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  visibility: Type.Optional(Visibility),
  files: Type.Optional(
    Type.Array(Type.Object({ file_path: Type.String({ maxLength: 255 }), content: Type.String({ maxLength: 1_048_576 }) }), {
      minItems: 1,
      maxItems: 10,
    }),
  ),
});

export const PageQuery = Type.Object({ ...PaginationQuery });
