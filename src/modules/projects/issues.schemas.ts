import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../../infra/http/response-types.js';
import { DateTime, Day, UserBasic } from './entities.schemas.js';

// Response entities of issues and their notes (see entities.schemas.ts: allow-lists).

export const Issue = Type.Object({
  id: Type.Integer(),
  iid: Type.Integer(),
  project_id: Type.Integer(),
  title: Type.String(),
  description: Type.String(),
  state: StringEnum(['opened', 'closed']),
  created_at: DateTime,
  updated_at: DateTime,
  closed_at: Nullable(DateTime),
  closed_by: Nullable(UserBasic),
  labels: Type.Array(Type.String()),
  milestone: Type.Null(),
  assignees: Type.Array(UserBasic),
  assignee: Nullable(UserBasic),
  author: Nullable(UserBasic),
  type: StringEnum(['ISSUE', 'INCIDENT']),
  issue_type: StringEnum(['issue', 'incident']),
  user_notes_count: Type.Integer(),
  upvotes: Type.Integer(),
  downvotes: Type.Integer(),
  due_date: Nullable(Day),
  confidential: Type.Boolean(),
  discussion_locked: Nullable(Type.Boolean()),
  web_url: Type.String(),
  references: Type.Object({ short: Type.String(), relative: Type.String(), full: Type.String() }),
});
export type IssueEntity = Static<typeof Issue>;
export const IssueList = Type.Array(Issue);

export const Note = Type.Object({
  id: Type.Integer(),
  type: Nullable(Type.String()),
  body: Type.String(),
  attachment: Nullable(Type.String()),
  author: Nullable(UserBasic),
  created_at: DateTime,
  updated_at: DateTime,
  system: Type.Boolean(),
  noteable_id: Type.Integer(),
  noteable_type: Type.String(),
  project_id: Nullable(Type.Integer()),
  noteable_iid: Nullable(Type.Integer()),
  resolvable: Type.Boolean(),
  confidential: Type.Boolean(),
  internal: Type.Boolean(),
});
export type NoteEntity = Static<typeof Note>;
export const NoteList = Type.Array(Note);
