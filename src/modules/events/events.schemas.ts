import { Type } from '@sinclair/typebox';
import { NamespaceOrProjectId, PaginationQuery } from '../../infra/http/index.js';

const text = (description: string) => Type.Optional(Type.String({ maxLength: 64, description }));

// Values are checked by the service so that a bad one answers "<name> does not have a valid
// value" / "<name> is invalid" like reference §2.2, with the `message` key of SPEC "Errors".
const filters = {
  action: text('created, updated, closed, reopened, pushed, commented, merged, joined, left, destroyed, expired, approved'),
  target_type: text('epic, issue, merge_request, milestone, note, project, snippet, user, wiki, design'),
  before: text('YYYY-MM-DD: events created before this day began'),
  after: text('YYYY-MM-DD: events created after this day ended'),
  sort: text('asc or desc (by id), default desc'),
  ...PaginationQuery,
};

export const OwnEventsQuery = Type.Object({ ...filters, scope: text('`all`: every event of the projects you are a member of') });
export const EventsListQuery = Type.Object(filters);
export const UserParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });
export const ProjectParams = Type.Object({ id: NamespaceOrProjectId });
