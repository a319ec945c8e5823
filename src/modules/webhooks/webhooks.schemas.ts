import { Type, type Static } from '@sinclair/typebox';
import { BRANCH_FILTER_STRATEGIES } from '../../infra/db/tables/webhooks.js';
import { IntegerId, NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';
import { IsoDate, NullableIsoDate, NullableString, StringEnum } from '../../infra/http/response-types.js';
import { ALERT_STATUSES } from './failure.rules.js';
import { TRIGGERS } from './payloads.rules.js';

export const OwnerParams = Type.Object({ id: NamespaceOrProjectId });
export const HookParams = Type.Object({ id: NamespaceOrProjectId, hook_id: IntegerId });
export const TestParams = Type.Object({ id: NamespaceOrProjectId, hook_id: IntegerId, trigger: StringEnum(TRIGGERS) });
export const ListHooksQuery = Type.Object({ ...PaginationQuery });

const Strategy = Type.Union(BRANCH_FILTER_STRATEGIES.map((s) => Type.Literal(s)));

/** What a hook's create and edit take (the established product's names; events Basalt lacks are not taken). */
const HookFields = {
  name: Type.Optional(Type.String({ maxLength: 255 })),
  description: Type.Optional(Type.String({ maxLength: 2048 })),
  token: Type.Optional(Type.String({ maxLength: 255, description: 'Sent as X-Gitlab-Token; never answered' })),
  push_events: Type.Optional(Type.Boolean()),
  push_events_branch_filter: Type.Optional(Type.String({ maxLength: 4096 })),
  branch_filter_strategy: Type.Optional(Strategy),
  tag_push_events: Type.Optional(Type.Boolean()),
  issues_events: Type.Optional(Type.Boolean()),
  confidential_issues_events: Type.Optional(Type.Boolean()),
  note_events: Type.Optional(Type.Boolean()),
  confidential_note_events: Type.Optional(Type.Boolean()),
  enable_ssl_verification: Type.Optional(Type.Boolean()),
};
export const CreateHookBody = Type.Object({ url: Type.String({ minLength: 1, maxLength: 2048 }), ...HookFields });
export const UpdateHookBody = Type.Object({ url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })), ...HookFields });
export type HookInput = Static<typeof UpdateHookBody>;

const Off = Type.Boolean({ description: 'An event Basalt does not send: always false' });
const common = {
  id: Type.Integer(),
  url: Type.String(),
  name: Type.String(),
  description: Type.String(),
  push_events: Type.Boolean(),
  push_events_branch_filter: NullableString,
  branch_filter_strategy: StringEnum(BRANCH_FILTER_STRATEGIES),
  issues_events: Type.Boolean(),
  confidential_issues_events: Type.Boolean(),
  merge_requests_events: Off,
  tag_push_events: Type.Boolean(),
  note_events: Type.Boolean(),
  confidential_note_events: Type.Boolean(),
  job_events: Off,
  pipeline_events: Off,
  wiki_page_events: Off,
  deployment_events: Off,
  releases_events: Off,
  feature_flag_events: Off,
  emoji_events: Off,
  resource_access_token_events: Off,
  repository_update_events: Off,
  enable_ssl_verification: Type.Boolean(),
  alert_status: StringEnum(ALERT_STATUSES),
  disabled_until: NullableIsoDate,
  url_variables: Type.Array(Type.Object({ key: Type.String() })),
  custom_headers: Type.Array(Type.Object({ key: Type.String() })),
  created_at: IsoDate,
};
export const ProjectHook = Type.Object({ ...common, project_id: Type.Integer() });
export const GroupHook = Type.Object({ ...common, group_id: Type.Integer(), subgroup_events: Off, member_events: Off });
export const ProjectHookList = Type.Array(ProjectHook);
export const GroupHookList = Type.Array(GroupHook);
export const TestAnswer = Type.Object({ message: Type.String() });
